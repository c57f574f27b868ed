import { randomBytes } from "node:crypto";
import {
  appendEvent,
  callUnary,
  createBullmqBus,
  createClient,
  createLogger,
  createMemoryBus,
  createPool,
  createOutboxTable,
  eventQueueNames,
  platformConsumerGroups,
  startOutboxRelay,
  withTransaction,
  type EventBus,
  type OutboxRelay,
  type Pool,
} from "@switchboard/kit";
import {
  createPgliteTestDatabase,
  createRealTestDatabase,
  type TestDatabase,
} from "@switchboard/kit/testing";
import { webhook } from "@switchboard/proto";
import {
  loadWebhookSettings,
  startWebhook,
  type RunningWebhook,
  type WebhookSettings,
} from "../../src/index.js";
import { systemResolver, type Resolver } from "../../src/url-guard.js";
import { failure, type UnaryMethod } from "@switchboard/test-support/grpc";

export const testRedisUrl = (): string => process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
export const logger = createLogger("webhook-test", {
  level: process.env.TEST_LOG_LEVEL ?? "silent",
});

export type Mode = "postgres+bullmq" | "pglite+memory";

export interface HarnessOptions {
  mode?: Mode;
  /** Environment overrides for the webhook settings (WEBHOOK_*). */
  env?: Record<string, string>;
  /** Hostnames the test resolver answers itself (others go to the system resolver). */
  hosts?: Record<string, string[]>;
}

/**
 * The webhook service on a fresh database with a real queue: its gRPC server and client, and a
 * "producer" schema with the kit's outbox and relay, so test events travel the platform's
 * real path (appendEvent → relay → events.webhook → fan-out → delivery job).
 */
export interface Harness {
  pool: Pool;
  bus: EventBus;
  database: TestDatabase;
  /** Redis key prefix of this harness's queues (for worker processes). */
  queuePrefix: string;
  settings: WebhookSettings;
  running: RunningWebhook;
  hosts: Record<string, string[]>;
  client: webhook.WebhookServiceClient;
  /** Calls a method of the generated client: `h.call(h.client.getSubscription, {...})`. */
  call<Req, Res>(
    method: UnaryMethod<Req, Res>,
    request: Req,
    metadata?: Record<string, string>,
  ): Promise<Res>;
  /** Records a platform event in the producer outbox (committed), as a service would. */
  emit(input: {
    type: string;
    accountId?: string;
    resourceId?: string;
    data?: Record<string, unknown>;
  }): Promise<string>;
  stop(): Promise<void>;
}

export const account = "acct_test";

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const mode = options.mode ?? "postgres+bullmq";
  const database =
    mode === "pglite+memory"
      ? await createPgliteTestDatabase()
      : await createRealTestDatabase("webhook");
  const pool = createPool(database.url, {
    max: mode === "pglite+memory" ? 8 : 20,
    name: "webhook-test",
  });
  const queuePrefix = `sbtest-${randomBytes(5).toString("hex")}`;
  const bullmq =
    mode === "pglite+memory"
      ? undefined
      : createBullmqBus({
          redisUrl: testRedisUrl(),
          prefix: queuePrefix,
          stalledIntervalMs: 500,
          lockDurationMs: 1_000,
        });
  const bus: EventBus = bullmq ?? createMemoryBus();
  const settings = loadWebhookSettings({
    NODE_ENV: "test",
    WEBHOOK_ALLOW_PRIVATE_HOSTS: "localhost:*",
    WEBHOOK_RETRY_SCHEDULE: "100ms,200ms,300ms",
    WEBHOOK_RETRY_JITTER: "0.2",
    WEBHOOK_TIMEOUT_MS: "1000",
    WEBHOOK_SWEEP_INTERVAL: "1h",
    ...options.env,
  });
  const hosts = { ...options.hosts };
  const resolve: Resolver = async (host) => {
    const found = hosts[host];
    return found
      ? found.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }))
      : systemResolver(host);
  };
  const running = await startWebhook({
    pool,
    bus,
    port: 0,
    logger,
    settings,
    resolve,
    relayPollIntervalMs: 50,
  });
  const client = createClient(webhook.WebhookServiceClient, `127.0.0.1:${running.port}`);

  await pool.query(`CREATE SCHEMA IF NOT EXISTS producer; ${createOutboxTable("producer")}`);
  const relay: OutboxRelay = startOutboxRelay({
    pool,
    schema: "producer",
    bus,
    logger,
    groups: platformConsumerGroups,
    pollIntervalMs: 50,
  });

  return {
    pool,
    bus,
    database,
    queuePrefix,
    settings,
    running,
    hosts,
    client,
    call: (method, request, metadata) =>
      callUnary("webhook", client, method, request, { deadlineMs: 30_000, metadata }),
    emit: async ({
      type,
      accountId = account,
      resourceId = `num_${randomBytes(4).toString("hex")}`,
      data = {},
    }) => {
      const event = await withTransaction(pool, (c) =>
        appendEvent(c, "producer", { type, accountId, resourceId, data }),
      );
      relay.wake();
      return event.id;
    },
    stop: async () => {
      client.close();
      await running.stop();
      await relay.stop();
      const queues = [
        "webhook.deliveries",
        ...platformConsumerGroups.flatMap((g) => eventQueueNames(g.name)),
      ];
      await Promise.all(queues.map((q) => bullmq?.obliterate(q).catch(() => undefined)));
      await bus.close();
      await pool.end();
      await database.drop();
    },
  };
}

export const waitFor = async (
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = "a condition",
) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export { failure };
