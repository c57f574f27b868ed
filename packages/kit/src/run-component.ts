import { z } from "zod";
import { startComponentAdmin } from "./admin-component.js";
import {
  addressVariable,
  grpcHostVariable,
  grpcPortVariable,
  type ComponentDeclaration,
} from "./component.js";
import { databaseUrlSetting, env, loadConfig } from "./config.js";
import { requireDatabaseAtStart, startupWaitSettings } from "./database-wait.js";
import { createPool } from "./db.js";
import { refuseDevelopmentSecretBeyondLoopback } from "./secret-settings.js";
import { createEventBus } from "./events/create-bus.js";
import { createLogger } from "./logger.js";
import { onShutdown, shutdownGraceMs } from "./shutdown.js";

const redisUrl = z
  .string({ error: "REDIS_URL is required (a redis:// URL): the queues live there" })
  .regex(/^rediss?:\/\//, "REDIS_URL must be a redis:// or rediss:// URL");

/** What every service reads in its own process, besides its own settings. */
export function processSettingsSchema(component: ComponentDeclaration) {
  return z.object({
    ...startupWaitSettings.shape,
    DATABASE_URL: databaseUrlSetting.describe(
      "PostgreSQL URL (the service keeps its tables in its own schema)",
    ),
    DATABASE_POOL_SIZE: z.coerce
      .number()
      .int()
      .min(2)
      .max(100)
      .default(component.poolSize)
      .describe("connections in the service's pool"),
    DATABASE_STATEMENT_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .min(100)
      .max(60_000)
      .default(4_000)
      .describe(
        "deadline of each of the service's statements and of the wait for a connection; keep it below the gateway's GRPC_DEADLINE_MS. Past it: 504 (the server cancelled it) or 503 (the database stopped answering)",
      ),
    REDIS_URL: redisUrl.describe("Redis URL: the event queues"),
    REDIS_QUEUE_PREFIX: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe("key prefix of the queues (default sb)"),
    QUEUE_PREFIX: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe("deprecated name of REDIS_QUEUE_PREFIX"),
    QUEUE_STALLED_INTERVAL_MS: z.coerce
      .number()
      .int()
      .min(100)
      .max(600_000)
      .default(30_000)
      .describe("how often a stalled job (its worker died) is looked for"),
    QUEUE_LOCK_DURATION_MS: z.coerce
      .number()
      .int()
      .min(100)
      .max(600_000)
      .default(30_000)
      .describe("how long a worker holds a job's lock without renewing it"),
    [grpcPortVariable(component.name)]: env
      .port(component.grpcPort)
      .describe(`gRPC listen port of ${component.name}`),
    [grpcHostVariable(component.name)]: z
      .string()
      .min(1)
      .default("127.0.0.1")
      .describe(`gRPC listen host of ${component.name}`),
    ...Object.fromEntries(
      component.needs.map((name) => [
        addressVariable(name),
        z
          .string({ error: `${addressVariable(name)} is required (host:port of ${name})` })
          .min(1)
          .describe(`gRPC address (host:port) of ${name}`),
      ]),
    ),
  });
}

/** A service's own process: its pool, its bus, its admin port, its server, its drain on SIGTERM. */
export async function runComponent<Settings>(
  component: ComponentDeclaration<Settings>,
  source: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const environment = { ...component.ownProcessDefaults, ...source };
  const processSettings = loadConfig(processSettingsSchema(component), environment) as Record<
    string,
    unknown
  >;
  const settings = loadConfig(component.settings, environment);
  const host = String(processSettings[grpcHostVariable(component.name)]);
  refuseDevelopmentSecretBeyondLoopback(
    component.settings,
    environment,
    grpcHostVariable(component.name),
    host,
  );
  const logger = createLogger(component.name);
  const pool = createPool(String(processSettings.DATABASE_URL), {
    name: component.name,
    max: Number(processSettings.DATABASE_POOL_SIZE),
    statementTimeoutMs: Number(processSettings.DATABASE_STATEMENT_TIMEOUT_MS),
  });
  const redis = {
    url: String(processSettings.REDIS_URL),
    prefix: String(processSettings.REDIS_QUEUE_PREFIX ?? processSettings.QUEUE_PREFIX ?? "sb"),
  };
  const bus = createEventBus({
    redisUrl: redis.url,
    logger,
    prefix: redis.prefix,
    stalledIntervalMs: Number(processSettings.QUEUE_STALLED_INTERVAL_MS),
    lockDurationMs: Number(processSettings.QUEUE_LOCK_DURATION_MS),
  });

  const admin = await startComponentAdmin({
    component: component.name,
    defaultPort: component.adminPort,
    logger,
    env: environment,
  });
  await requireDatabaseAtStart(String(processSettings.DATABASE_URL), logger, environment);
  const running = await component.start(
    {
      pool,
      bus,
      logger,
      host,
      port: Number(processSettings[grpcPortVariable(component.name)]),
      addresses: Object.fromEntries(
        component.needs.map((name) => [name, String(processSettings[addressVariable(name)])]),
      ),
      ownProcess: true,
      redis,
    },
    settings,
  );
  admin.setReady(() => running.readiness());

  onShutdown(
    logger,
    async () => {
      admin.markShuttingDown();
      await running.stop();
      await bus.close();
      await pool.end();
    },
    (running.drainMs ?? 0) + shutdownGraceMs(environment),
  );
}
