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
import { loadMessagingConfig } from "./config.js";
import { startMessaging } from "./server.js";

/** Mesh entrypoint: `node services/messaging/dist/main.js`. The rest of the settings: config.ts. */
const configSchema = z.object({
  DATABASE_URL: z.string().min(1, "DATABASE_URL is required (a postgres:// URL)"),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, "REDIS_URL is required (a redis:// URL)"),
  REDIS_QUEUE_PREFIX: z.string().min(1).max(100).default("sb"),
  MESSAGING_GRPC_PORT: env.port(50053),
  MESSAGING_GRPC_HOST: z.string().min(1).default("127.0.0.1"),
  INVENTORY_ADDR: z.string().min(1).default("127.0.0.1:50051"),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
});

const config = loadConfig(configSchema);
const messagingConfig = loadMessagingConfig();
const logger = createLogger("messaging");
const pool = createPool(config.DATABASE_URL, { name: "messaging", max: config.DATABASE_POOL_SIZE });
const bus = createEventBus({
  redisUrl: config.REDIS_URL,
  logger,
  prefix: config.REDIS_QUEUE_PREFIX,
});

const admin = await startComponentAdmin({ component: "messaging", defaultPort: 9093, logger });
const messaging = await startMessaging({
  pool,
  bus,
  port: config.MESSAGING_GRPC_PORT,
  host: config.MESSAGING_GRPC_HOST,
  logger,
  inventoryAddress: config.INVENTORY_ADDR,
  config: messagingConfig,
});
admin.setReady(() => messaging.health.check());

onShutdown(logger, async () => {
  admin.markShuttingDown();
  await messaging.stop();
  await bus.close();
  await pool.end();
});
