import {
  createEventBus,
  createLogger,
  createPool,
  onShutdown,
  startComponentAdmin,
  shutdownGraceMs,
} from "@switchboard/kit";
import { loadMeshConfig } from "./config.js";
import { startCallControl } from "./server.js";

/** Mesh entrypoint: `node services/call-control/dist/main.js`. */
const config = loadMeshConfig();
const logger = createLogger("call-control");
const pool = createPool(config.DATABASE_URL, {
  name: "call-control",
  max: config.DATABASE_POOL_SIZE,
});
const bus = createEventBus({
  redisUrl: config.REDIS_URL,
  logger,
  prefix: config.REDIS_QUEUE_PREFIX,
});

const admin = await startComponentAdmin({ component: "call-control", defaultPort: 9092, logger });
const callControl = await startCallControl({
  pool,
  bus,
  port: config.CALL_CONTROL_GRPC_PORT,
  host: config.CALL_CONTROL_GRPC_HOST,
  logger,
  inventoryAddress: config.INVENTORY_ADDR,
  settings: config.settings,
});
admin.setReady(() => callControl.health.check());

// SIGTERM: no new calls; the live ones run on here for up to CALL_DRAIN_SECONDS, then are left
// to their durable timers in the database, which the next process (or another replica) fires.
const callDrainMs = config.CALL_DRAIN_SECONDS * 1000;
onShutdown(
  logger,
  async () => {
    admin.markShuttingDown();
    await callControl.stop({ callDrainMs });
    await bus.close();
    await pool.end();
  },
  callDrainMs + shutdownGraceMs(),
);
