import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createPool, withTransaction, type Pool } from "../src/db.js";
import {
  appendEvent,
  consumeEvents,
  consumeOnce,
  createOutboxTable,
  createProcessedEventsTable,
  eventBatchQueueName,
  eventQueueName,
  startOutboxRelay,
  toPublicEvent,
  UnrecoverableJobError,
  type ConsumeEventsOptions,
  type ConsumerGroup,
  type EventBus,
  type EventEnvelope,
  type EventHandler,
  type OutboxRelay,
  type OutboxRelayOptions,
  type QueueWorker,
} from "../src/events/index.js";
import { randomName, requireTestRedis, testBusKinds, type TestBus } from "../src/events/testing.js";
import { createLogger } from "../src/logger.js";
import { testDatabaseKinds, type TestDatabase } from "../src/testing.js";

// npm test needs Redis (README): a Redis that is down fails this suite, never skips it.
await requireTestRedis();
const logger = createLogger("events-test", { level: process.env.TEST_LOG_LEVEL ?? "silent" });

const waitFor = async (check: () => boolean | Promise<boolean>, timeoutMs = 8_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting for a condition");
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The same suite on real PostgreSQL + BullMQ (mesh) and on PGlite + the in-process bus (embedded). */
const modes = [
  { name: "postgres + bullmq", db: testDatabaseKinds[0], bus: testBusKinds[0], needsRedis: true },
  { name: "pglite + memory", db: testDatabaseKinds[1], bus: testBusKinds[1], needsRedis: false },
] as const;

describe.each(modes)("outbox → relay → consumers on $name", (mode) => {
  let database: TestDatabase;
  let pool: Pool;
  let testBus: TestBus;
  let bus: EventBus;
  const queues: string[] = [];
  let cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    database = await mode.db.create("events");
    pool = createPool(database.url, {
      max: mode.db.name === "pglite" ? 8 : 20,
      name: "events-test",
    });
    testBus = mode.bus.create();
    bus = testBus.bus;
  });
  afterEach(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    cleanups = [];
  });
  afterAll(async () => {
    await testBus?.dispose(queues);
    await pool?.end();
    await database?.drop();
  });

  /** A fresh service schema (outbox + processed events + an effects table) per test. */
  const freshSchema = async () => {
    const schema = randomName("svc");
    await pool.query(
      `CREATE SCHEMA ${schema};
       ${createOutboxTable(schema)}
       ${createProcessedEventsTable(schema)}
       CREATE TABLE ${schema}.effects (event_id text NOT NULL, consumer text NOT NULL);`,
    );
    return schema;
  };
  const group = (label: string, extra: Omit<ConsumerGroup, "name"> = {}): ConsumerGroup => {
    const name = randomName(label);
    queues.push(eventQueueName(name), eventBatchQueueName(name));
    return { name, backoff: { type: "fixed", delayMs: 50 }, ...extra };
  };
  const relay = (
    schema: string,
    groups: ConsumerGroup[],
    overrides: Partial<
      Pick<
        OutboxRelayOptions,
        "bus" | "batchSize" | "pollIntervalMs" | "idlePollMaxMs" | "listen" | "coalesceMs"
      >
    > = {},
  ): OutboxRelay => {
    const started = startOutboxRelay({
      pool,
      schema,
      bus,
      logger,
      groups,
      pollIntervalMs: 50,
      ...overrides,
    });
    cleanups.push(() => started.stop());
    return started;
  };
  const consume = (
    groupName: string,
    handler: EventHandler,
    options: ConsumeEventsOptions<Record<string, unknown>> = {},
  ): QueueWorker => {
    const worker = consumeEvents(bus, groupName, handler, options);
    cleanups.push(() => worker.close());
    return worker;
  };
  const record = (schema: string, consumer: string) => async (event: EventEnvelope) => {
    await withTransaction(pool, (client) =>
      consumeOnce(client, schema, consumer, event.id, (c) =>
        c.query(`INSERT INTO ${schema}.effects (event_id, consumer) VALUES ($1, $2)`, [
          event.id,
          consumer,
        ]),
      ),
    );
  };
  const effects = async (schema: string, consumer: string) =>
    (
      await pool.query(`SELECT event_id FROM ${schema}.effects WHERE consumer = $1`, [consumer])
    ).rows.map((r) => r.event_id as string);
  const append = (schema: string, resourceId: string, type = "number.held") =>
    withTransaction(pool, (client) =>
      appendEvent(client, schema, {
        type,
        accountId: "acct_test",
        resourceId,
        data: { id: resourceId },
      }),
    );

  it("a rolled-back event is never published; a committed one reaches every matching group once", async () => {
    const schema = await freshSchema();
    const usage = group("usage");
    const webhook = group("webhook", { types: ["number.*"] });
    const calls = group("calls", { types: ["call.*"] });
    const seen: Record<string, EventEnvelope[]> = { usage: [], webhook: [], calls: [] };
    const traces: unknown[] = [];
    consume(usage.name, async (event, job) => {
      seen.usage!.push(event);
      traces.push(job.trace);
    });
    consume(webhook.name, async (event) => void seen.webhook!.push(event));
    consume(calls.name, async (event) => void seen.calls!.push(event));
    relay(schema, [usage, webhook, calls]);

    const rolledBack = await withTransaction(pool, async (client) => {
      const event = await appendEvent(client, schema, {
        type: "number.held",
        accountId: "acct_a",
        resourceId: "num_1",
        data: {},
      });
      throw Object.assign(new Error("state change failed"), { event });
    }).catch((error: { event: EventEnvelope }) => error.event);
    const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const committed = await withTransaction(pool, (client) =>
      appendEvent(client, schema, {
        type: "number.held",
        accountId: "acct_a",
        resourceId: "num_1",
        data: { number: "+14155550100" },
        traceCarrier: { traceparent, tracestate: "sb=1" },
      }),
    );
    await waitFor(() => seen.usage!.length === 1 && seen.webhook!.length === 1);
    await sleep(300);

    expect(committed.sequence).toBe(1); // the rolled-back append gave its number back
    expect(seen.usage!.map((e) => e.id)).toEqual([committed.id]);
    expect(seen.webhook!.map((e) => e.id)).toEqual([committed.id]);
    expect(seen.calls).toEqual([]);
    expect(seen.usage![0]).toEqual(committed);
    expect(traces).toEqual([{ traceparent, tracestate: "sb=1" }]);
    expect(Object.keys(toPublicEvent(committed)).sort()).toEqual([
      "account_id",
      "data",
      "id",
      "sequence",
      "timestamp",
      "type",
    ]);
    expect(committed.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const rows = await pool.query(`SELECT id, published_at FROM ${schema}.outbox`);
    expect(rows.rows.map((r) => r.id)).toEqual([committed.id]);
    expect(rows.rows[0].published_at).toBeInstanceOf(Date);
    expect(rows.rows.map((r) => r.id)).not.toContain(rolledBack.id);
  });

  it("sequence is gapless and increasing per resource under 50 concurrent appends", async () => {
    const schema = await freshSchema();
    const results = await Promise.allSettled(
      Array.from({ length: 60 }, (_, i) =>
        withTransaction(pool, async (client) => {
          const resourceId = i % 6 === 5 ? "call_b" : "call_a"; // 50 on call_a, 10 on call_b
          const event = await appendEvent(client, schema, {
            type: "call.ringing",
            accountId: "acct_a",
            resourceId,
            data: { i },
          });
          if (i % 10 === 3) throw new Error("rolled back"); // some appends give their number back
          return event;
        }),
      ),
    );
    const committed = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    expect(committed).toHaveLength(54);
    const { rows } = await pool.query(
      `SELECT resource_id, array_agg(sequence ORDER BY sequence) AS seqs FROM ${schema}.outbox GROUP BY resource_id ORDER BY resource_id`,
    );
    const expectRange = (n: number) => Array.from({ length: n }, (_, i) => i + 1);
    const countA = committed.filter((e) => e.resource_id === "call_a").length;
    expect(rows.map((r) => [r.resource_id, r.seqs.map(Number)])).toEqual([
      ["call_a", expectRange(countA)],
      ["call_b", expectRange(54 - countA)],
    ]);
    // The next append continues the sequence.
    expect((await append(schema, "call_a", "call.answered")).sequence).toBe(countA + 1);
  });

  it("two relays at once publish every event, exactly one job per event id", async () => {
    const schema = await freshSchema();
    const usage = group("usage");
    await withTransaction(pool, async (client) => {
      for (let i = 0; i < 150; i += 1) {
        await appendEvent(client, schema, {
          type: "message.sent",
          accountId: "acct_a",
          resourceId: `msg_${i % 7}`,
          data: { i },
        });
      }
    });
    const deliveries: string[] = [];
    consume(usage.name, async (event) => void deliveries.push(event.id), { concurrency: 4 });
    const relays = [
      relay(schema, [usage], { batchSize: 10 }),
      relay(schema, [usage], { batchSize: 10 }),
    ];
    await waitFor(async () => (await bus.jobCounts(eventQueueName(usage.name))).completed === 150);
    await sleep(200);
    expect(new Set(deliveries).size).toBe(150);
    const [first, second] = relays.map((r) => r.stats().published);
    expect(first! + second!).toBe(150); // disjoint batches (SKIP LOCKED): nothing sent twice
    expect(Math.min(first!, second!)).toBeGreaterThan(0); // and both relays took part
    expect(await bus.jobCounts(eventQueueName(usage.name))).toMatchObject({
      completed: 150,
      waiting: 0,
      failed: 0,
    });
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n FROM ${schema}.outbox WHERE published_at IS NULL`,
    );
    expect(rows[0].n).toBe(0);
  });

  it("a crash between publish and mark republishes; the job id dedupes it", async () => {
    const schema = await freshSchema();
    const usage = group("usage");
    let crashes = 0;
    const crashingBus: EventBus = {
      ...bus,
      publish: async (queue, job, options) => {
        const published = await bus.publish(queue, job, options);
        if (crashes === 0) {
          crashes += 1;
          throw new Error("relay crashed after publishing");
        }
        return published;
      },
    };
    const handled: string[] = [];
    consume(usage.name, async (event) => void handled.push(event.id));
    const event = await append(schema, "num_9");
    relay(schema, [usage], { bus: crashingBus });
    await waitFor(async () => {
      const { rows } = await pool.query(`SELECT published_at FROM ${schema}.outbox WHERE id = $1`, [
        event.id,
      ]);
      return rows[0].published_at !== null;
    });
    await sleep(200);
    expect(crashes).toBe(1);
    expect(handled).toEqual([event.id]);
    expect(await bus.jobCounts(eventQueueName(usage.name))).toMatchObject({
      completed: 1,
      waiting: 0,
    });
  });

  it("a consumer failing twice is retried per the backoff; its effect happens once", async () => {
    const schema = await freshSchema();
    const usage = group("usage", {
      attempts: 5,
      backoff: { type: "schedule", delaysMs: [100, 200] },
    });
    const starts: number[] = [];
    consume(usage.name, async (event, job) => {
      starts.push(Date.now());
      await withTransaction(pool, (client) =>
        consumeOnce(client, schema, usage.name, event.id, async (c) => {
          await c.query(`INSERT INTO ${schema}.effects (event_id, consumer) VALUES ($1, $2)`, [
            event.id,
            usage.name,
          ]);
          if (job.attempt < 3) throw new Error(`downstream unavailable (attempt ${job.attempt})`);
        }),
      );
    });
    relay(schema, [usage]);
    const event = await append(schema, "msg_1", "message.sent");
    await waitFor(async () => (await bus.jobCounts(eventQueueName(usage.name))).completed === 1);
    expect(starts).toHaveLength(3);
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(90);
    expect(starts[2]! - starts[1]!).toBeGreaterThanOrEqual(190);
    expect(await effects(schema, usage.name)).toEqual([event.id]);
  });

  it("an unrecoverable error is not retried", async () => {
    const schema = await freshSchema();
    const webhook = group("webhook", { attempts: 5, backoff: { type: "fixed", delayMs: 20 } });
    const attempts: number[] = [];
    const finals: boolean[] = [];
    consume(
      webhook.name,
      async (_event, job) => {
        attempts.push(job.attempt);
        throw new UnrecoverableJobError("receiver answered 400");
      },
      { onFailed: (_job: unknown, _error: unknown, final: boolean) => void finals.push(final) },
    );
    relay(schema, [webhook]);
    await append(schema, "num_2");
    await waitFor(async () => (await bus.jobCounts(eventQueueName(webhook.name))).failed === 1);
    await sleep(150);
    expect(attempts).toEqual([1]);
    expect(finals).toEqual([true]);
  });

  it("a redelivered event id is a no-op, also when deliveries race", async () => {
    const schema = await freshSchema();
    const usage = group("usage");
    const handled: string[] = [];
    const recordUsage = record(schema, usage.name);
    consume(usage.name, async (event) => {
      handled.push(event.id);
      await recordUsage(event);
    });
    relay(schema, [usage]);
    const event = await append(schema, "num_3");
    await waitFor(() => handled.length === 1);
    // A redelivery the job-id dedupe cannot catch (e.g. after BullMQ removed the finished job).
    await bus.publish(
      eventQueueName(usage.name),
      { name: event.type, data: event },
      { jobId: `${event.id}.again` },
    );
    await waitFor(() => handled.length === 2);
    // Five racing deliveries of a new event straight through consumeOnce.
    const racing = await append(schema, "num_4");
    const outcomes = await Promise.all(
      Array.from({ length: 5 }, () =>
        withTransaction(pool, (client) =>
          consumeOnce(client, schema, usage.name, racing.id, async () => "done"),
        ),
      ),
    );
    await sleep(100);
    expect(outcomes.filter((o) => o.processed)).toHaveLength(1);
    expect((await effects(schema, usage.name)).sort()).toEqual([event.id]);
    const { rows } = await pool.query(
      `SELECT event_id FROM ${schema}.processed_events ORDER BY event_id`,
    );
    expect(rows.map((r) => r.event_id).sort()).toEqual([event.id, racing.id].sort());
  });

  it("relay stop() finishes the batch in flight; worker close() finishes its job", async () => {
    const schema = await freshSchema();
    const usage = group("usage");
    let publishing = 0;
    const slowBus: EventBus = {
      ...bus,
      publish: async (queue, job, options) => {
        publishing += 1;
        await sleep(100);
        return bus.publish(queue, job, options);
      },
    };
    await withTransaction(pool, async (client) => {
      for (let i = 0; i < 3; i += 1) {
        await appendEvent(client, schema, {
          type: "number.released",
          accountId: "acct_a",
          resourceId: `num_${i}`,
          data: {},
        });
      }
    });
    const started = startOutboxRelay({
      pool,
      schema,
      bus: slowBus,
      logger,
      groups: [usage],
      pollIntervalMs: 50,
      batchSize: 10,
    });
    await waitFor(() => publishing > 0); // the batch's publishes are under way
    await started.stop();
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n FROM ${schema}.outbox WHERE published_at IS NOT NULL`,
    );
    expect(rows[0].n).toBe(3);
    expect(publishing).toBe(3);

    let finished = 0;
    const worker = consumeEvents(
      bus,
      usage.name,
      async () => {
        await sleep(150);
        finished += 1;
      },
      { concurrency: 3 },
    );
    await waitFor(async () => (await bus.jobCounts(eventQueueName(usage.name))).active > 0);
    await worker.close();
    const counts = await bus.jobCounts(eventQueueName(usage.name));
    expect(counts.active).toBe(0);
    expect(counts.completed).toBe(finished);
    expect(finished).toBeGreaterThan(0);
  });

  /** The bus, counting the jobs published to each queue. */
  const countingBus = () => {
    const published = new Map<string, number>();
    const counting: EventBus = {
      ...bus,
      publish: (queue, job, options) => {
        published.set(queue, (published.get(queue) ?? 0) + 1);
        return bus.publish(queue, job, options);
      },
    };
    return { counting, published: (queue: string) => published.get(queue) ?? 0 };
  };
  const appendMany = (schema: string, count: number, carrier?: (i: number) => string) =>
    withTransaction(pool, async (client) => {
      const events: EventEnvelope[] = [];
      for (let i = 0; i < count; i += 1) {
        const traceparent = carrier?.(i);
        events.push(
          await appendEvent(client, schema, {
            type: "message.sent",
            accountId: "acct_a",
            resourceId: `msg_${i}`,
            data: { i },
            ...(traceparent ? { traceCarrier: { traceparent } } : {}),
          }),
        );
      }
      return events;
    });

  it("a batched group gets each relay batch as one job; its consumer takes every event once, with its own trace", async () => {
    const schema = await freshSchema();
    const usage = group("usage", { batched: true });
    const calls = group("calls");
    const traceparent = (i: number) =>
      `00-${"ab".repeat(15)}${String(i).padStart(2, "0")}-${"cd".repeat(8)}-01`;
    const events = await appendMany(schema, 30, traceparent);
    const seen: { event: string; job: string; trace: unknown }[] = [];
    const taken: string[] = [];
    consume(
      usage.name,
      async (event, job) => void seen.push({ event: event.id, job: job.id, trace: job.trace }),
      { batched: true },
    );
    consume(calls.name, async (event) => void taken.push(event.id));
    const { counting, published } = countingBus();
    relay(schema, [usage, calls], { bus: counting, batchSize: 10 });
    await waitFor(() => seen.length === 30 && taken.length === 30);
    await sleep(200);

    expect(published(eventBatchQueueName(usage.name))).toBe(3); // 30 events in batches of 10
    expect(published(eventQueueName(usage.name))).toBe(0);
    expect(published(eventQueueName(calls.name))).toBe(30); // a group not batched: a job each
    expect(seen.map((s) => s.event).sort()).toEqual(events.map((e) => e.id).sort());
    for (const [i, event] of events.entries()) {
      expect(seen.find((s) => s.event === event.id)).toEqual({
        event: event.id,
        job: event.id,
        trace: { traceparent: traceparent(i) },
      });
    }
    expect(await bus.jobCounts(eventBatchQueueName(usage.name))).toMatchObject({
      waiting: 0,
      active: 0,
      failed: 0,
    });
  });

  it("an event failing in a batch retries the batch: the others are taken again, their effects once", async () => {
    const schema = await freshSchema();
    const usage = group("usage", {
      batched: true,
      attempts: 5,
      backoff: { type: "fixed", delayMs: 50 },
    });
    const events = await appendMany(schema, 5);
    const flaky = events[2]!.id;
    const calls = new Map<string, number>();
    const failed: [string, boolean][] = [];
    const effect = record(schema, usage.name);
    consume(
      usage.name,
      async (event, job) => {
        calls.set(event.id, (calls.get(event.id) ?? 0) + 1);
        await effect(event);
        if (event.id === flaky && job.attempt < 3) throw new Error("downstream unavailable");
      },
      { batched: true, onFailed: (job, _error, final) => void failed.push([job.id, final]) },
    );
    relay(schema, [usage]);
    await waitFor(() => (calls.get(flaky) ?? 0) === 3);
    await sleep(300);

    expect([...calls.values()]).toEqual([3, 3, 3, 3, 3]); // one batch, three tries
    expect((await effects(schema, usage.name)).sort()).toEqual(events.map((e) => e.id).sort());
    expect(failed).toEqual([
      [flaky, false],
      [flaky, false],
    ]);
  });

  it("a batch whose every failure is unrecoverable ends at once", async () => {
    const schema = await freshSchema();
    const webhook = group("webhook", { batched: true, attempts: 5 });
    const events = await appendMany(schema, 3);
    const tries: number[] = [];
    const failed: [string, boolean][] = [];
    consume(
      webhook.name,
      async (event, job) => {
        tries.push(job.attempt);
        if (event.id === events[1]!.id) throw new UnrecoverableJobError("receiver answered 400");
      },
      { batched: true, onFailed: (job, _error, final) => void failed.push([job.id, final]) },
    );
    relay(schema, [webhook]);
    await waitFor(() => failed.length === 1);
    await sleep(300);
    expect(tries).toEqual([1, 1, 1]);
    expect(failed).toEqual([[events[1]!.id, true]]);
  });

  it("a batched consumer still takes events published one by one (by a relay of an earlier release)", async () => {
    const schema = await freshSchema();
    const usage = group("usage", { batched: true });
    const events = await appendMany(schema, 4);
    const seen: string[] = [];
    consume(usage.name, async (event) => void seen.push(event.id), { batched: true });
    const { counting, published } = countingBus();
    relay(schema, [{ ...usage, batched: false }], { bus: counting });
    await waitFor(() => seen.length === 4);
    expect(published(eventQueueName(usage.name))).toBe(4);
    expect(seen.sort()).toEqual(events.map((e) => e.id).sort());
  });

  it("a woken relay waits coalesceMs for more commits: five commits, one batch", async () => {
    const schema = await freshSchema();
    const usage = group("usage", { batched: true });
    const seen: string[] = [];
    consume(usage.name, async (event) => void seen.push(event.id), { batched: true });
    const relayed = relay(schema, [usage], {
      coalesceMs: 400,
      pollIntervalMs: 10_000,
      idlePollMaxMs: 10_000,
      listen: false,
    });
    await sleep(300); // the first (empty) batch
    for (let i = 0; i < 5; i += 1) await append(schema, `num_${i}`); // each commit wakes it
    // A consumer may see the batch before the relay has marked it published and counted it.
    await waitFor(() => seen.length === 5 && relayed.stats().published === 5);
    expect(relayed.stats()).toMatchObject({ published: 5, batches: 1 });
  });

  it("a commit that appended wakes this process's relay without NOTIFY; an idle relay backs off", async () => {
    const schema = await freshSchema();
    const usage = group("usage");
    const handled: number[] = [];
    consume(usage.name, async () => void handled.push(Date.now()));
    relay(schema, [usage], { pollIntervalMs: 50, idlePollMaxMs: 60_000, listen: false });
    await sleep(1_500); // empty batches: the floor is far past a second by now
    const t0 = Date.now();
    await withTransaction(pool, (client) =>
      appendEvent(
        client,
        schema,
        { type: "number.held", accountId: "acct_test", resourceId: "num_6", data: {} },
        { notify: false },
      ),
    );
    await waitFor(() => handled.length === 1, 3_000);
    expect(handled[0]! - t0).toBeLessThan(1_000);
  });

  // PGlite over a socket accepts LISTEN but delivers no notifications: there, polling is the floor.
  if (mode.db.name === "postgres")
    it("NOTIFY wakes the relay long before its poll interval", async () => {
      const schema = await freshSchema();
      const usage = group("usage");
      const handled: number[] = [];
      consume(usage.name, async () => void handled.push(Date.now()));
      relay(schema, [usage], { pollIntervalMs: 10_000 });
      await sleep(300); // the initial empty batch and LISTEN
      const t0 = Date.now();
      await append(schema, "num_5");
      await waitFor(() => handled.length === 1, 3_000);
      expect(handled[0]! - t0).toBeLessThan(2_000);
    });
});
