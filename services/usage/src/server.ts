import {
  type EventBus,
  type Logger,
  type Pool,
  type RunningService,
  type SigningKeyStore,
  startGrpcServer,
  startServiceHealth,
} from "@switchboard/kit";
import { startUsageConsumers, type UsageConsumers } from "./consumers.js";
import { migrateUsage } from "./migrations.js";
import { createRecordSigner } from "./record-signer.js";
import { createUsageService } from "./service.js";
import { createUsageKeyStore } from "./signing-keys.js";

export interface UsageOptions {
  pool: Pool;
  /** The platform's queues: `events.usage` and its batches (the services' outbox relays). */
  bus: EventBus;
  port: number;
  host?: string;
  logger: Logger;
  /** SIGNING_KEY_SECRET: the record-signing keys are sealed under it. */
  signingKeySecret: string;
  /** Business-fact jobs (an event, or a relay batch of them) taken at once (default 64). */
  factConcurrency?: number;
  /** Records per INSERT (default 500). */
  maxBatch?: number;
  /** How often readiness re-checks PostgreSQL and the queue (default 2 s). */
  readinessIntervalMs?: number;
  /** Threads that compute signatures (default: one per spare core, 1–4; 0 signs in line). */
  signingThreads?: number;
}

export interface RunningUsage extends RunningService {
  keys: SigningKeyStore;
  consumers: UsageConsumers;
  /** Stops the consumers (jobs in flight commit first), then drains the gRPC server. */
  stop(): Promise<void>;
}

/**
 * Migrates, ensures a record-signing key, consumes the business facts and serves UsageService
 * (which also takes the gateway's relayed api.request records).
 */
export async function startUsage(options: UsageOptions): Promise<RunningUsage> {
  const { pool, bus, logger } = options;
  await migrateUsage(pool);
  const keys = createUsageKeyStore({ pool, secret: options.signingKeySecret, logger });
  await keys.init();
  const signer = createRecordSigner(
    keys,
    options.signingThreads !== undefined ? { threads: options.signingThreads } : {},
  );
  const consumers = startUsageConsumers({
    pool,
    bus,
    logger,
    signer,
    ...(options.factConcurrency ? { factConcurrency: options.factConcurrency } : {}),
    ...(options.maxBatch ? { maxBatch: options.maxBatch } : {}),
  });
  const server = await startGrpcServer({
    name: "usage",
    services: [createUsageService({ pool, keys, batcher: consumers.batcher, logger })],
    ...(options.host !== undefined ? { host: options.host } : {}),
    port: options.port,
    logger,
  });
  const health = await startServiceHealth({
    server,
    pool,
    bus,
    logger,
    ...(options.readinessIntervalMs ? { intervalMs: options.readinessIntervalMs } : {}),
  });
  return {
    port: server.port,
    server,
    keys,
    consumers,
    health,
    stop: async () => {
      // Not ready from the first moment: the consumers may take a while to finish their jobs.
      server.setServing(false);
      health.stop();
      await consumers.close();
      await signer.close();
      await server.drain();
    },
  };
}
