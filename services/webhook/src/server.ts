import {
  startGrpcServer,
  startOutboxRelay,
  startServiceHealth,
  type DependencyWatch,
  type EventBus,
  type Logger,
  type Pool,
  type QueueWorker,
} from "@switchboard/kit";
import type { WebhookSettings } from "./config.js";
import { schema, type WebhookContext } from "./context.js";
import { startDeliveryWorker } from "./delivery-worker.js";
import { createDispatcher } from "./dispatch.js";
import { startFanOut } from "./fan-out.js";
import { migrateWebhook } from "./migrations.js";
import { redispatchAllPending, startSweeper } from "./redispatch.js";
import { webhookRelayGroups } from "./relay-groups.js";
import { createSecretBox } from "./secret-box.js";
import { createWebhookService } from "./service.js";
import { startSink } from "./sink.js";
import { startSubscriptionCache } from "./subscription-cache.js";
import type { Resolver } from "./url-guard.js";

export interface WebhookOptions {
  pool: Pool;
  bus: EventBus;
  port: number;
  host?: string;
  logger: Logger;
  settings: WebhookSettings;
  /** DNS for the SSRF guard (tests); the system resolver by default. */
  resolve?: Resolver;
  /** Outbox relay polling floor (default 250 ms). */
  relayPollIntervalMs?: number;
}

export interface RunningWebhook {
  port: number;
  /** The internal sink's URL. */
  sinkUrl: string;
  context: WebhookContext;
  /** Its dependencies' health, which drives grpc.health.v1 (and the admin port's /readyz). */
  health: DependencyWatch;
  /** Drains gRPC, stops consuming, lets deliveries in flight finish, flushes the outbox. */
  stop(): Promise<void>;
}

/** Builds the shared context: secret box, sink, guard, dispatcher. */
export async function createWebhookContext(options: WebhookOptions) {
  const { pool, bus, logger, settings } = options;
  const box = await createSecretBox(settings.secretKey);
  const sink = await startSink({ pool, box, logger, port: settings.sinkPort });
  const context: WebhookContext = {
    pool,
    bus,
    logger,
    settings,
    box,
    guard: {
      allowPrivateHosts: settings.allowPrivateHosts,
      internalOrigins: [sink.origin],
      ...(options.resolve ? { resolve: options.resolve } : {}),
    },
    dispatcher: createDispatcher(bus, settings.retryDelaysMs),
    sinkUrl: sink.url,
  };
  return { context, sink };
}

/**
 * Migrates, serves WebhookService (with grpc.health.v1), and runs the fan-out consumer, the
 * outbox relay, the redispatch sweeper, the internal sink and (unless settings say otherwise)
 * the delivery workers.
 */
export async function startWebhook(options: WebhookOptions): Promise<RunningWebhook> {
  const { pool, bus, logger, settings } = options;
  await migrateWebhook(pool);
  const { context, sink } = await createWebhookContext(options);
  const server = await startGrpcServer({
    name: "webhook",
    services: [createWebhookService(context)],
    ...(options.host !== undefined ? { host: options.host } : {}),
    port: options.port,
    logger,
  });
  const health = await startServiceHealth({ server, pool, bus, logger });
  // The in-process queue starts empty: what was pending before a restart is queued again.
  if (bus.kind === "memory") await redispatchAllPending(pool, context.dispatcher);
  const relay = startOutboxRelay({
    pool,
    schema,
    bus,
    logger,
    groups: webhookRelayGroups,
    ...(options.relayPollIntervalMs ? { pollIntervalMs: options.relayPollIntervalMs } : {}),
  });
  const subscriptions = startSubscriptionCache({ pool, logger });
  const fanOut = startFanOut(context, subscriptions.read);
  const workers: QueueWorker[] = settings.deliveryWorkers ? [startDeliveryWorker(context)] : [];
  const sweeper = startSweeper({
    pool,
    dispatcher: context.dispatcher,
    logger,
    intervalMs: settings.sweepIntervalMs,
    overdueMs: settings.redispatchAfterMs,
    eventRetentionMs: settings.eventRetentionMs,
  });
  return {
    port: server.port,
    sinkUrl: sink.url,
    context,
    health,
    stop: async () => {
      health.stop();
      await server.drain();
      await fanOut.close();
      await subscriptions.stop();
      await Promise.all(workers.map((worker) => worker.close()));
      await sweeper.stop();
      await relay.stop();
      await sink.close();
    },
  };
}

/**
 * Delivery workers alone (worker-main.ts, the benchmark's worker processes): no gRPC, no
 * fan-out, no relay; the service process relays the `webhook.delivered` facts they record.
 */
export async function startDeliveryWorkers(
  options: WebhookOptions,
): Promise<{ stop(): Promise<void> }> {
  const { context, sink } = await createWebhookContext(options);
  const worker = startDeliveryWorker(context);
  return {
    stop: async () => {
      await worker.close();
      await sink.close();
    },
  };
}
