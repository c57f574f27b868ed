import {
  createEventBus,
  createLogger,
  createPool,
  env,
  loadConfig,
  onShutdown,
  startComponentAdmin,
} from "@switchboard/kit";
import { z } from "zod";
import { startInventory } from "./server.js";

/** Mesh entrypoint: `node services/inventory/dist/main.js`. */
const configSchema = z.object({
  DATABASE_URL: z.string().min(1, "DATABASE_URL is required (a postgres:// URL)"),
  INVENTORY_GRPC_PORT: env.port(50051),
  INVENTORY_GRPC_HOST: z.string().min(1).default("127.0.0.1"),
  HOLD_LIMIT_PER_ACCOUNT: z.coerce.number().int().min(1).max(10_000).default(50),
  HOLD_SWEEP_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
  REDIS_URL: env.optionalUrl(),
  REDIS_QUEUE_PREFIX: z.string().min(1).max(100).default("sb"),
});

const config = loadConfig(configSchema);
const logger = createLogger("inventory");
const pool = createPool(config.DATABASE_URL, { name: "inventory", max: config.DATABASE_POOL_SIZE });
// Events reach the other services through Redis; without it they wait in the outbox.
const bus = config.REDIS_URL
  ? createEventBus({ redisUrl: config.REDIS_URL, logger, prefix: config.REDIS_QUEUE_PREFIX })
  : undefined;

const admin = await startComponentAdmin({ component: "inventory", defaultPort: 9091, logger });
const inventory = await startInventory({
  pool,
  port: config.INVENTORY_GRPC_PORT,
  host: config.INVENTORY_GRPC_HOST,
  logger,
  holdLimit: config.HOLD_LIMIT_PER_ACCOUNT,
  sweepIntervalMs: config.HOLD_SWEEP_INTERVAL_MS,
  ...(bus ? { bus } : {}),
});
admin.setReady(() => inventory.health.check());

onShutdown(logger, async () => {
  admin.markShuttingDown();
  await inventory.stop();
  await bus?.close();
  await pool.end();
});
