import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { createBullmqBus, createLogger, createPool, percentile, type Pool } from "@switchboard/kit";
import { createRealTestDatabase } from "@switchboard/kit/testing";
import { deliveryQueue, loadWebhookSettings, startWebhook } from "@switchboard/webhook";
import { forkChild, queueDeliveries, receiverFile, workerFile, type Child } from "./bench-setup.js";

/**
 * `npm run bench:webhooks`: deliveries per second to a local receiver with one and with four
 * delivery worker processes (worker-main.js, each consuming the BullMQ queue with concurrency
 * WEBHOOK_DELIVERY_CONCURRENCY) on real PostgreSQL and Redis. Each run queues N pending
 * deliveries first, then starts the workers; the rate is N over the span from the first to the
 * last delivered_at. Every delivery is the real path: load, SSRF guard, sign, POST, record the
 * attempt + `webhook.delivered` in one transaction; the service process relays those facts.
 */
const { values: args } = parseArgs({
  options: {
    deliveries: { type: "string", default: "20000" },
    workers: { type: "string", default: "1,4" },
    concurrency: { type: "string", default: "64" },
    host: { type: "string", default: "localhost" },
    out: { type: "string", default: "bench/results" },
  },
});
const redisUrl = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";
const total = Number(args.deliveries);

interface RunResult {
  workers: number;
  deliveries: number;
  seconds: number;
  per_second: number;
  wall_seconds: number;
  attempt_ms: { p50: number; p95: number; p99: number };
  failed: number;
  /** Deliveries recorded per transaction (distinct delivered_at: a transaction's now()). */
  per_transaction: number;
}

async function waitDelivered(pool: Pool, subscriptionId: string, count: number, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query<{ done: number }>(
      `SELECT count(*)::int AS done FROM webhook.deliveries
        WHERE subscription_id = $1 AND status <> 'pending'`,
      [subscriptionId],
    );
    if ((rows[0]?.done ?? 0) >= count) return;
    if (Date.now() > deadline)
      throw new Error(`only ${rows[0]?.done} of ${count} deliveries finished in time`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function run(
  workers: number,
  context: Awaited<ReturnType<typeof setup>>,
): Promise<RunResult> {
  const { pool, service, receiverUrl, env } = context;
  const { subscription } = await createSubscription(service, receiverUrl);
  // Paused while the jobs are queued and the worker processes start, so every worker begins
  // together and process start-up is not measured.
  await context.queue.pause();
  await queueDeliveries(pool, service.context.dispatcher, subscription, "acct_bench", total);
  const children: Child[] = [];
  try {
    children.push(
      ...(await Promise.all(Array.from({ length: workers }, () => forkChild(workerFile, env)))).map(
        (c) => c.child,
      ),
    );
  } catch (error) {
    await Promise.all(children.map((child) => child.stop()));
    throw error;
  }
  const started = Date.now();
  await context.queue.resume();
  try {
    await waitDelivered(pool, subscription, total, 10 * 60_000);
  } finally {
    await Promise.all(children.map((child) => child.stop()));
  }
  const wall = (Date.now() - started) / 1000;
  const { rows } = await pool.query<{
    first: Date;
    last: Date;
    failed: number;
    transactions: number;
  }>(
    `SELECT min(delivered_at) AS first, max(delivered_at) AS last,
            count(DISTINCT delivered_at)::int AS transactions,
            count(*) FILTER (WHERE status = 'failed')::int AS failed
       FROM webhook.deliveries WHERE subscription_id = $1`,
    [subscription],
  );
  const durations = (
    await pool.query<{ duration_ms: number }>(
      `SELECT a.duration_ms FROM webhook.delivery_attempts a
         JOIN webhook.deliveries d ON d.id = a.delivery_id
        WHERE d.subscription_id = $1 ORDER BY a.duration_ms`,
      [subscription],
    )
  ).rows.map((r) => r.duration_ms);
  const span = (rows[0]!.last.getTime() - rows[0]!.first.getTime()) / 1000;
  return {
    workers,
    deliveries: total,
    seconds: Number(span.toFixed(2)),
    per_second: Math.round(total / span),
    wall_seconds: Number(wall.toFixed(2)),
    attempt_ms: {
      p50: percentile(durations, 50),
      p95: percentile(durations, 95),
      p99: percentile(durations, 99),
    },
    failed: rows[0]!.failed,
    per_transaction: Number((total / Math.max(1, rows[0]!.transactions)).toFixed(1)),
  };
}

async function createSubscription(service: Awaited<ReturnType<typeof startWebhook>>, url: string) {
  const { createSubscription: create } = await import("@switchboard/webhook/subscriptions");
  const created = await create(
    service.context,
    { accountId: "acct_bench", url, events: ["call.*"] },
    undefined,
  );
  return { subscription: created.subscription!.id };
}

async function setup() {
  const database = await createRealTestDatabase("bench_webhooks");
  const prefix = `sbbench_${randomBytes(4).toString("hex")}`;
  const logger = createLogger("webhook-bench", { level: "warn" });
  const pool = createPool(database.url, { max: 10, name: "webhook-bench" });
  const bus = createBullmqBus({ redisUrl, prefix, logger });
  const { child: receiver, first } = await forkChild<{ port: number }>(receiverFile, {});
  const receiverUrl = `http://${args.host}:${first.port}/hook`;
  const env = {
    NODE_ENV: "production",
    SIGNING_KEY_SECRET: "benchmark-signing-key-secret-0123456789",
    LOG_LEVEL: "warn",
    DATABASE_URL: database.url,
    REDIS_URL: redisUrl,
    REDIS_QUEUE_PREFIX: prefix,
    ADMIN_PORT: "0",
    DATABASE_POOL_SIZE: "8",
    WEBHOOK_ALLOW_PRIVATE_HOSTS: `${args.host}:*`,
    WEBHOOK_DELIVERY_CONCURRENCY: args.concurrency,
    WEBHOOK_SINK_PORT: "0",
  };
  const settings = loadWebhookSettings({ ...env, WEBHOOK_DELIVERY_WORKERS: "false" });
  const queueConnection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue(deliveryQueue, { connection: queueConnection, prefix });
  const service = await startWebhook({ pool, bus, port: 0, host: "127.0.0.1", logger, settings });
  return {
    pool,
    service,
    receiverUrl,
    env,
    queue,
    stop: async () => {
      await queue.close();
      queueConnection.disconnect();
      await service.stop();
      await bus.obliterate(deliveryQueue).catch(() => undefined);
      await bus.close();
      await receiver.stop();
      await pool.end();
      const redis = new Redis(redisUrl);
      const keys = await redis.keys(`${prefix}*`);
      for (let i = 0; i < keys.length; i += 500) await redis.del(...keys.slice(i, i + 500));
      redis.disconnect();
      await database.drop();
    },
  };
}

async function main() {
  const loadAtStart = os.loadavg().map((l) => Number(l.toFixed(2)));
  const context = await setup();
  const results: RunResult[] = [];
  try {
    for (const workers of args.workers.split(",").map(Number)) {
      const result = await run(workers, context);
      console.log(
        `${workers} worker(s): ${result.per_second} deliveries/s (${result.deliveries} in ${result.seconds} s, ${result.per_transaction} per recording transaction)`,
      );
      results.push(result);
    }
  } finally {
    await context.stop();
  }
  const machine = {
    cpu: os.cpus()[0]?.model ?? "unknown",
    cores: os.cpus().length,
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    load_average_at_start: loadAtStart,
    load_average_at_end: os.loadavg().map((l) => Number(l.toFixed(2))),
  };
  const generatedAt = new Date().toISOString();
  const settings = {
    deliveries_per_run: total,
    concurrency_per_worker: Number(args.concurrency),
    receiver_host: args.host,
    goal_per_second_four_workers: 2000,
  };
  mkdirSync(args.out, { recursive: true });
  writeFileSync(
    path.join(args.out, "webhooks.json"),
    `${JSON.stringify({ generated_at: generatedAt, settings, machine, results }, null, 2)}\n`,
  );
  writeFileSync(
    path.join(args.out, "webhooks.md"),
    renderMarkdown(generatedAt, settings, machine, results),
  );
}

function renderMarkdown(
  generatedAt: string,
  settings: { deliveries_per_run: number; concurrency_per_worker: number; receiver_host: string },
  machine: Record<string, unknown>,
  results: RunResult[],
): string {
  const rows = results.map(
    (r) =>
      `| ${r.workers} | ${r.deliveries} | ${r.seconds} | **${r.per_second}** | ${r.wall_seconds} | ${r.attempt_ms.p50} | ${r.attempt_ms.p95} | ${r.attempt_ms.p99} | ${r.failed} |`,
  );
  const four = results.find((r) => r.workers === 4);
  return [
    "# Webhook delivery benchmark",
    "",
    "Deliveries per second to a local HTTP receiver (its own process, keep-alive, answers 200) with",
    "one and with four delivery worker processes (`worker-main.js`), each consuming the BullMQ",
    `queue on real Redis with concurrency ${settings.concurrency_per_worker}, on real PostgreSQL. Each run queues`,
    `${settings.deliveries_per_run} pending deliveries, then starts the workers; the rate is the deliveries over the span`,
    "from the first to the last `delivered_at`. Every delivery takes the production path: load the",
    "row and the subscription's sealed secrets, open them, SSRF guard (the receiver's host",
    `\`${settings.receiver_host}\` is resolved on every attempt and exempt via WEBHOOK_ALLOW_PRIVATE_HOSTS), sign`,
    "(Standard Webhooks), POST, then record: attempt log + delivery state + `webhook.delivered` in",
    "the outbox, in one transaction per batch of concurrent deliveries (up to 100 within 5 ms);",
    "the service process relays those facts to the usage queue. Workers log at `warn` (at `info`",
    "every attempt is a log line). The machine is shared: see the load averages below.",
    "",
    `Command: \`npm run bench:webhooks\` (after \`npm run build\`). Generated ${generatedAt}.`,
    "",
    "| workers | deliveries | span s | deliveries/s | wall s | attempt p50 ms | p95 ms | p99 ms | failed |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...rows,
    "",
    `Goal: ≥ 2,000 deliveries/s with four workers — ${four ? (four.per_second >= 2000 ? "met" : "not met") : "not run"}.`,
    "",
    "## Machine",
    "",
    ...Object.entries(machine).map(
      ([k, v]) => `- ${k}: ${Array.isArray(v) ? v.join(", ") : String(v)}`,
    ),
    "",
  ].join("\n");
}

await main();
