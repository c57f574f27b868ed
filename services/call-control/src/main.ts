import { createEventBus, createLogger, createPool, onShutdown } from "@switchboard/kit";
import { loadMeshConfig } from "./config.js";
import { startCallControl } from "./server.js";

/** Mesh entrypoint: `node services/call-control/dist/main.js`. */
const config = loadMeshConfig();
const logger = createLogger("call-control");
const pool = createPool(config.DATABASE_URL, {
  name: "call-control",
  max: config.DATABASE_POOL_SIZE,
});
const bus = createEventBus({ redisUrl: config.REDIS_URL, logger });

const callControl = await startCallControl({
  pool,
  bus,
  port: config.CALL_CONTROL_GRPC_PORT,
  host: config.CALL_CONTROL_GRPC_HOST,
  logger,
  inventoryAddress: config.INVENTORY_ADDR,
  settings: config.settings,
});

// Live calls are durable timers in the database: they carry on in the next process.
onShutdown(logger, async () => {
  await callControl.stop();
  await bus.close();
  await pool.end();
});
