import {
  batchTransactions,
  type EventBus,
  type Logger,
  type Pool,
  type RunningGrpcServer,
  type RunningService,
  SigningKeyStore,
  startGrpcServer,
  startServiceHealth,
} from "@switchboard/kit";
import type { MessagingCarrier } from "./carrier/carrier.js";
import { SandboxCarrier } from "./carrier/sandbox-carrier.js";
import { SmppCarrier } from "./carrier/smpp/smpp-carrier.js";
import { loadMessagingConfig, type MessagingConfig } from "./config.js";
import type { MessagingContext } from "./context.js";
import { startDispatcher } from "./delivery/dispatcher.js";
import { applyReceiptOn } from "./delivery/receipts.js";
import { sendRetry } from "./delivery/submit-queue.js";
import { startSubmitWorker } from "./delivery/submit-worker.js";
import { startSweeper } from "./delivery/sweeper.js";
import { migrateMessaging } from "./migrations.js";
import { receiveNetworkPart } from "./messages/network-inbound.js";
import { SCHEMA, startOutbox } from "./outbox.js";
import { openDeliveryPool } from "./delivery-pool.js";
import { SenderNumbers } from "./sender-numbers.js";
import { createMessagingService } from "./service.js";
import { TEMPLATE_KEY_PURPOSE, TemplateSigner } from "./templates/signature.js";

export interface MessagingOptions {
  pool: Pool;
  /** The platform's bus: BullMQ on Redis (mesh) or in process (embedded). Not closed here. */
  bus: EventBus;
  port: number;
  host?: string;
  logger: Logger;
  /**
   * Connections of the delivery pipeline; by default a pool of MESSAGING_DELIVERY_POOL_SIZE is
   * opened beside `pool` (and closed on stop), so background work never starves the API.
   */
  deliveryPool?: Pool;
  /** The inventory's gRPC address (INVENTORY_ADDR): `from` numbers are checked there. */
  inventoryAddress: string;
  /** The Redis the replicas share (mesh): the smpp carrier's submit rate lives there. */
  redis?: { url: string; prefix: string } | undefined;
  /** Default: read from the environment (loadMessagingConfig). */
  config?: MessagingConfig;
}

export interface RunningMessaging extends RunningService {
  /** What the API path works with (the `pool` given). */
  context: MessagingContext;
  /** What the delivery pipeline works with (the delivery pool). */
  deliveryContext: MessagingContext;
  keys: SigningKeyStore;
  /** Drains gRPC, then stops the workers, the carrier and the outbox relays. The pool and bus stay open. */
  stop(): Promise<void>;
}

/**
 * Migrates, ensures the template signing key, starts the delivery pipeline (outbox relays →
 * dispatcher → submit worker → carrier → receipts, plus the sweeper) and serves
 * MessagingService (with grpc.health.v1).
 */
export async function startMessaging(options: MessagingOptions): Promise<RunningMessaging> {
  const { pool, bus, logger } = options;
  const config = options.config ?? loadMessagingConfig();
  await migrateMessaging(pool);
  const ownDeliveryPool = options.deliveryPool === undefined;
  const deliveryPool = options.deliveryPool ?? openDeliveryPool(pool, config.deliveryPoolSize);
  const keys = new SigningKeyStore({
    pool,
    schema: SCHEMA,
    secret: config.signingKeySecret,
    purposes: [TEMPLATE_KEY_PURPOSE],
    logger,
  });
  await keys.init();
  const numbers = new SenderNumbers(options.inventoryAddress, {
    deadlineMs: config.inventoryDeadlineMs,
    logger,
  });
  const outbox = startOutbox({
    pool: deliveryPool,
    bus,
    logger,
    relays: config.relays,
    pollIntervalMs: config.relayPollMs,
    sendRetry: sendRetry(config),
  });
  const groupCommit = batchTransactions({
    pool: deliveryPool,
    lingerMs: config.groupCommitMs,
    concurrency: config.groupCommitBatches,
  });
  const carrier: MessagingCarrier =
    config.carrier === "smpp"
      ? new SmppCarrier({
          config: config.smpp,
          logger,
          redis: options.redis,
          // A part still unanswered this long before the lease ends gives the try back.
          submitDeadlineMs: Math.max(1_000, config.leaseMs - 5_000),
        })
      : new SandboxCarrier({
          groupCommit,
          pool: deliveryPool,
          logger,
          receiptDelayMs: config.sandboxReceiptDelayMs,
          concurrency: config.submitConcurrency,
        });
  const context: MessagingContext = {
    pool,
    bus,
    logger,
    config,
    signer: new TemplateSigner(keys),
    outbox,
    numbers,
    carrier,
    groupCommit,
    bookingCommit: batchTransactions({ pool: deliveryPool, lingerMs: config.groupCommitMs }),
  };
  const deliveryContext: MessagingContext = { ...context, pool: deliveryPool };
  await carrier.start({
    receipt: async (receipt) => {
      await context.groupCommit((client) => applyReceiptOn(deliveryContext, client, receipt));
    },
    inbound: (part) => receiveNetworkPart(deliveryContext, part),
  });
  const workers = [startDispatcher(deliveryContext, bus), startSubmitWorker(deliveryContext, bus)];
  const sweeper = startSweeper(deliveryContext, bus, logger);
  const stopPipeline = async () => {
    await sweeper.stop();
    // The carrier first: a submit still waiting for the network gives its message back at once
    // (a transient error the queue retries) instead of holding the workers' close; one already
    // sent is answered first (smpp: within SMPP_RESPONSE_TIMEOUT_MS).
    await carrier.stop();
    await Promise.all(workers.map((worker) => worker.close()));
    await outbox.stop();
    numbers.close();
    if (ownDeliveryPool) await deliveryPool.end();
  };
  let server: RunningGrpcServer;
  try {
    server = await startGrpcServer({
      name: "messaging",
      services: [createMessagingService(context, keys)],
      ...(options.host !== undefined ? { host: options.host } : {}),
      port: options.port,
      logger,
    });
  } catch (error) {
    await stopPipeline();
    throw error;
  }
  const health = await startServiceHealth({ server, pool, bus, logger });
  return {
    port: server.port,
    server,
    health,
    context,
    deliveryContext,
    keys,
    stop: async () => {
      health.stop();
      await server.drain();
      await stopPipeline();
    },
  };
}
