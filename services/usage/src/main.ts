import {
  createBullmqBus,
  createLogger,
  createPool,
  env,
  loadConfig,
  onShutdown,
  startComponentAdmin,
} from "@switchboard/kit";
import { z } from "zod";
import { startUsage } from "./server.js";
import { usageSigningKeySecret } from "./signing-keys.js";

/** Mesh entrypoint: `node services/usage/dist/main.js`. */
const configSchema = z
  .object({
    NODE_ENV: env.nodeEnv(),
    DATABASE_URL: z.string().min(1, "DATABASE_URL is required (a postgres:// URL)"),
    REDIS_URL: z
      .string()
      .regex(
        /^rediss?:\/\//,
        "REDIS_URL is required (a redis:// URL): the record queues live there",
      ),
    REDIS_QUEUE_PREFIX: z.string().min(1).max(100).default("sb"),
    QUEUE_STALLED_INTERVAL_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
    QUEUE_LOCK_DURATION_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
    USAGE_GRPC_PORT: env.port(50054),
    USAGE_GRPC_HOST: z.string().min(1).default("127.0.0.1"),
    SIGNING_KEY_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
    USAGE_RECORD_CONCURRENCY: z.coerce.number().int().min(1).max(2_000).default(256),
    USAGE_FACT_CONCURRENCY: z.coerce.number().int().min(1).max(200).default(64),
    USAGE_BATCH_SIZE: z.coerce.number().int().min(1).max(5_000).default(500),
    USAGE_SIGNING_THREADS: z.coerce.number().int().min(0).max(32).optional(),
    DATABASE_POOL_SIZE: z.coerce.number().int().min(2).max(100).default(10),
  })
  .superRefine((value, ctx) => {
    if (value.NODE_ENV === "production" && !value.SIGNING_KEY_SECRET) {
      ctx.addIssue({
        code: "custom",
        path: ["SIGNING_KEY_SECRET"],
        message: "is required in production",
      });
    }
  });

const config = loadConfig(configSchema);
const logger = createLogger("usage");
const pool = createPool(config.DATABASE_URL, { name: "usage", max: config.DATABASE_POOL_SIZE });
// A killed process's jobs are taken again once their lock lapses and the stall check runs.
const bus = createBullmqBus({
  redisUrl: config.REDIS_URL,
  logger,
  prefix: config.REDIS_QUEUE_PREFIX,
  stalledIntervalMs: config.QUEUE_STALLED_INTERVAL_MS,
  lockDurationMs: config.QUEUE_LOCK_DURATION_MS,
});

const admin = await startComponentAdmin({ component: "usage", defaultPort: 9094, logger });
const usage = await startUsage({
  pool,
  bus,
  port: config.USAGE_GRPC_PORT,
  host: config.USAGE_GRPC_HOST,
  logger,
  signingKeySecret: usageSigningKeySecret(),
  recordConcurrency: config.USAGE_RECORD_CONCURRENCY,
  factConcurrency: config.USAGE_FACT_CONCURRENCY,
  maxBatch: config.USAGE_BATCH_SIZE,
  ...(config.USAGE_SIGNING_THREADS !== undefined
    ? { signingThreads: config.USAGE_SIGNING_THREADS }
    : {}),
});
admin.setReady(() => usage.health.check());

onShutdown(logger, async () => {
  admin.markShuttingDown();
  usage.server.setServing(false);
  await usage.stop();
  await bus.close();
  await pool.end();
});
