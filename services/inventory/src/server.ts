import {
  type EventBus,
  type Logger,
  platformConsumerGroups,
  type Pool,
  type RunningService,
  startGrpcServer,
  startOutboxRelay,
  startServiceHealth,
} from "@switchboard/kit";
import { migrateInventory } from "./migrations.js";
import { startNumberOwnerWatch } from "./number-owner-watch.js";
import { createInventoryService } from "./service.js";
import { startSweeper } from "./sweeper.js";

export interface InventoryOptions {
  pool: Pool;
  port: number;
  host?: string;
  logger: Logger;
  holdLimit?: number;
  /** How often expired holds are swept (default 30 s). */
  sweepIntervalMs?: number;
  /** Where the outbox relay publishes events; without one, events wait in the outbox. */
  bus?: EventBus;
}

export interface RunningInventory extends RunningService {
  /** Ends the number-owner watchers, drains the gRPC server, then stops the sweeper. The pool stays open (the caller owns it). */
  stop(): Promise<void>;
}

/** Migrates, serves InventoryService (with grpc.health.v1), starts the hold sweeper and the outbox relay. */
export async function startInventory(options: InventoryOptions): Promise<RunningInventory> {
  await migrateInventory(options.pool);
  const watch = startNumberOwnerWatch(options.pool, options.logger);
  const server = await startGrpcServer({
    name: "inventory",
    services: [
      createInventoryService({
        pool: options.pool,
        logger: options.logger,
        watch,
        ...(options.holdLimit !== undefined ? { holdLimit: options.holdLimit } : {}),
      }),
    ],
    ...(options.host !== undefined ? { host: options.host } : {}),
    port: options.port,
    logger: options.logger,
  });
  const health = await startServiceHealth({
    server,
    pool: options.pool,
    bus: options.bus,
    logger: options.logger,
  });
  const sweeper = startSweeper({
    pool: options.pool,
    logger: options.logger,
    intervalMs: options.sweepIntervalMs ?? 30_000,
  });
  const relay = options.bus
    ? startOutboxRelay({
        pool: options.pool,
        schema: "inventory",
        bus: options.bus,
        logger: options.logger,
        groups: platformConsumerGroups,
      })
    : undefined;
  return {
    port: server.port,
    server,
    health,
    stop: async () => {
      health.stop();
      await watch.stop();
      await server.drain();
      await sweeper.stop();
      await relay?.stop();
    },
  };
}
