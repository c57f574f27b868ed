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
import { loadWebhookSettings } from "./config.js";
import { startWebhook } from "./server.js";

/** Mesh entrypoint: `node services/webhook/dist/main.js`. */
const configSchema = z.object({
  DATABASE_URL: z.string().min(1, "DATABASE_URL is required (a postgres:// URL)"),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, "REDIS_URL is required (a redis:// URL)"),
  WEBHOOK_GRPC_PORT: env.port(50055),
  WEBHOOK_GRPC_HOST: z.string().min(1).default("127.0.0.1"),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(20),
  REDIS_QUEUE_PREFIX: z.string().min(1).max(100).optional(),
  /** Deprecated: the old name of REDIS_QUEUE_PREFIX. */
  QUEUE_PREFIX: z.string().min(1).max(100).optional(),
  QUEUE_STALLED_INTERVAL_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  QUEUE_LOCK_DURATION_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
});

const config = loadConfig(configSchema);
// Every replica must listen on the same sink port: a delivery to the sink reaches the
// loopback of whichever replica runs it.
const settings = loadWebhookSettings({ WEBHOOK_SINK_PORT: "50056", ...process.env });
const logger = createLogger("webhook");
const pool = createPool(config.DATABASE_URL, { name: "webhook", max: config.DATABASE_POOL_SIZE });
const bus = createBullmqBus({
  redisUrl: config.REDIS_URL,
  prefix: config.REDIS_QUEUE_PREFIX ?? config.QUEUE_PREFIX ?? "sb",
  logger,
  stalledIntervalMs: config.QUEUE_STALLED_INTERVAL_MS,
  lockDurationMs: config.QUEUE_LOCK_DURATION_MS,
});

const admin = await startComponentAdmin({ component: "webhook", defaultPort: 9095, logger });
const webhook = await startWebhook({
  pool,
  bus,
  port: config.WEBHOOK_GRPC_PORT,
  host: config.WEBHOOK_GRPC_HOST,
  logger,
  settings,
});
admin.setReady(() => webhook.health.check());

onShutdown(logger, async () => {
  admin.markShuttingDown();
  await webhook.stop();
  await bus.close();
  await pool.end();
});
