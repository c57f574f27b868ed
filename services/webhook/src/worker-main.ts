import {
  busCheck,
  createBullmqBus,
  createLogger,
  createPool,
  databaseCheck,
  databaseUrlSetting,
  loadConfig,
  onShutdown,
  requireDatabaseAtStart,
  startComponentAdmin,
  watchDependencies,
} from "@switchboard/kit";
import { z } from "zod";
import { loadWebhookSettings } from "./config.js";
import { startDeliveryWorkers } from "./server.js";

/**
 * A delivery-only process: `node services/webhook/dist/worker-main.js` (scale deliveries apart
 * from the API; the benchmark's worker processes). Set WEBHOOK_DELIVERY_WORKERS=false on the
 * service when workers run apart.
 */
const configSchema = z.object({
  DATABASE_URL: databaseUrlSetting,
  REDIS_URL: z.string().regex(/^rediss?:\/\//, "REDIS_URL is required (a redis:// URL)"),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(20),
  REDIS_QUEUE_PREFIX: z.string().min(1).max(100).optional(),
  /** Deprecated: the old name of REDIS_QUEUE_PREFIX. */
  QUEUE_PREFIX: z.string().min(1).max(100).optional(),
  QUEUE_STALLED_INTERVAL_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  QUEUE_LOCK_DURATION_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
});

const config = loadConfig(configSchema);
const settings = loadWebhookSettings({ WEBHOOK_SINK_PORT: "50056", ...process.env });
const logger = createLogger("webhook-worker");
const pool = createPool(config.DATABASE_URL, {
  name: "webhook-worker",
  max: config.DATABASE_POOL_SIZE,
});
const bus = createBullmqBus({
  redisUrl: config.REDIS_URL,
  prefix: config.REDIS_QUEUE_PREFIX ?? config.QUEUE_PREFIX ?? "sb",
  logger,
  stalledIntervalMs: config.QUEUE_STALLED_INTERVAL_MS,
  lockDurationMs: config.QUEUE_LOCK_DURATION_MS,
});

// Admin port (ADMIN_PORT, default 9096): /metrics for the delivery series, /livez, /readyz.
const admin = await startComponentAdmin({ component: "webhook-worker", defaultPort: 9096, logger });
await requireDatabaseAtStart(config.DATABASE_URL, logger);
const workers = await startDeliveryWorkers({ pool, bus, port: 0, logger, settings });
const health = watchDependencies({
  checks: { postgres: databaseCheck(pool), redis: busCheck(bus) },
  logger,
});
admin.setReady(() => health.check());
process.send?.({ ready: true });

onShutdown(logger, async () => {
  admin.markShuttingDown();
  health.stop();
  await workers.stop();
  await bus.close();
  await pool.end();
  await admin.close();
});
