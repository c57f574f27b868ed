import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  RetryLaterError,
  UnrecoverableJobError,
  type EventBus,
  type Job,
  type QueueWorker,
} from "../src/events/index.js";
import { randomName, requireTestRedis, testBusKinds, type TestBus } from "../src/events/testing.js";

// npm test needs Redis (README): a Redis that is down fails these tests, never skips them.
await requireTestRedis();

const waitFor = async (check: () => boolean | Promise<boolean>, timeoutMs = 5_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting for a condition");
    await new Promise((resolve) => setTimeout(resolve, 15));
  }
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The queue semantics both buses share; each test uses its own random queue. */
describe.each(testBusKinds)("event bus: $name", (kind) => {
  let testBus: TestBus;
  let bus: EventBus;
  const queues: string[] = [];
  const workers: QueueWorker[] = [];
  const queue = () => {
    const name = randomName("q");
    queues.push(name);
    return name;
  };
  const consume = <T>(name: string, handler: (job: Job<T>) => Promise<void>, options = {}) => {
    const worker = bus.consume<T>(name, handler, options);
    workers.push(worker);
    return worker;
  };

  beforeAll(() => {
    testBus = kind.create();
    bus = testBus.bus;
  });
  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.close()));
    await testBus?.dispose(queues);
  });

  it("delivers JSON data and the trace carrier", async () => {
    const q = queue();
    const seen: Job<{ at: string; n: number }>[] = [];
    consume<{ at: string; n: number }>(q, async (job) => void seen.push(job));
    const trace = { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" };
    const { id } = await bus.publish(q, {
      name: "thing.done",
      data: { at: new Date(0) as unknown as string, n: 1 },
      trace,
    });
    await waitFor(() => seen.length === 1);
    expect(seen[0]).toMatchObject({
      id,
      queue: q,
      name: "thing.done",
      attempt: 1,
      maxAttempts: 1,
      trace,
    });
    expect(seen[0]!.data).toEqual({ at: "1970-01-01T00:00:00.000Z", n: 1 });
    await waitFor(async () => (await bus.jobCounts(q)).completed === 1);
    expect(await bus.isReady()).toBe(true);
  });

  it("dedupes by job id, also after the job completed", async () => {
    const q = queue();
    let runs = 0;
    await bus.publish(q, { name: "x", data: 1 }, { jobId: "evt_same" });
    await bus.publish(q, { name: "x", data: 2 }, { jobId: "evt_same" });
    consume(q, async () => void (runs += 1));
    await waitFor(async () => (await bus.jobCounts(q)).completed === 1);
    await bus.publish(q, { name: "x", data: 3 }, { jobId: "evt_same" });
    await sleep(150);
    expect(runs).toBe(1);
    expect(await bus.jobCounts(q)).toMatchObject({ waiting: 0, delayed: 0, completed: 1 });
    await expect(bus.publish(q, { name: "x", data: 0 }, { jobId: "12" })).rejects.toThrow(/job id/);
    await expect(bus.publish(q, { name: "x", data: 0 }, { jobId: "a:b" })).rejects.toThrow(
      /job id/,
    );
    await expect(bus.publish("bad:name", { name: "x", data: 0 })).rejects.toThrow(/queue name/);
  });

  it("retries on the backoff schedule, then succeeds", async () => {
    const q = queue();
    const starts: number[] = [];
    const failures: boolean[] = [];
    consume(
      q,
      async (job) => {
        starts.push(Date.now());
        if (job.attempt < 3) throw new Error(`boom ${job.attempt}`);
      },
      { onFailed: (_job: Job, _error: unknown, final: boolean) => void failures.push(final) },
    );
    await bus.publish(
      q,
      { name: "x", data: null },
      { attempts: 5, backoff: { type: "schedule", delaysMs: [150, 300] } },
    );
    await waitFor(async () => (await bus.jobCounts(q)).completed === 1);
    expect(starts).toHaveLength(3);
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(140);
    expect(starts[2]! - starts[1]!).toBeGreaterThanOrEqual(290);
    expect(failures).toEqual([false, false]);
  });

  it("fails after the last attempt; an unrecoverable error is not retried", async () => {
    const q = queue();
    const attempts: Record<string, number[]> = { exhaust: [], fatal: [] };
    const finals: string[] = [];
    consume(
      q,
      async (job) => {
        attempts[job.name]!.push(job.attempt);
        if (job.name === "fatal") throw new UnrecoverableJobError("4xx: do not retry");
        throw new Error("still failing");
      },
      {
        concurrency: 2,
        onFailed: (job: Job, _error: unknown, final: boolean) =>
          void (final && finals.push(job.name)),
      },
    );
    await bus.publish(
      q,
      { name: "exhaust", data: null },
      { attempts: 3, backoff: { type: "fixed", delayMs: 20 } },
    );
    await bus.publish(
      q,
      { name: "fatal", data: null },
      { attempts: 5, backoff: { type: "fixed", delayMs: 20 } },
    );
    await waitFor(async () => (await bus.jobCounts(q)).failed === 2);
    await sleep(100);
    expect(attempts).toEqual({ exhaust: [1, 2, 3], fatal: [1] });
    expect(finals.sort()).toEqual(["exhaust", "fatal"]);
  });

  it("honours RetryLaterError and delayed jobs", async () => {
    const q = queue();
    const runs: { name: string; at: number }[] = [];
    consume(
      q,
      async (job) => {
        runs.push({ name: job.name, at: Date.now() });
        if (job.name === "later" && job.attempt === 1) throw new RetryLaterError("429", 300);
      },
      { concurrency: 2 },
    );
    const t0 = Date.now();
    await bus.publish(q, { name: "delayed", data: null }, { delay: 300 });
    await bus.publish(
      q,
      { name: "later", data: null },
      { attempts: 2, backoff: { type: "fixed", delayMs: 10 } },
    );
    await sleep(150);
    expect(runs.map((r) => r.name)).toEqual(["later"]);
    expect((await bus.jobCounts(q)).delayed).toBe(2);
    await waitFor(async () => (await bus.jobCounts(q)).completed === 2);
    const delayed = runs.find((r) => r.name === "delayed")!;
    const later = runs.filter((r) => r.name === "later");
    expect(delayed.at - t0).toBeGreaterThanOrEqual(290);
    expect(later[1]!.at - later[0]!.at).toBeGreaterThanOrEqual(290);
  });

  it("runs up to `concurrency` jobs at once across competing workers, each once", async () => {
    const q = queue();
    let active = 0;
    let peak = 0;
    const done: string[] = [];
    const handler = async (job: Job) => {
      active += 1;
      peak = Math.max(peak, active);
      await sleep(60);
      active -= 1;
      done.push(job.id);
    };
    consume(q, handler, { concurrency: 3 });
    consume(q, handler, { concurrency: 2 });
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        bus.publish(q, { name: "x", data: i }, { jobId: `j_${i}` }),
      ),
    );
    await waitFor(() => done.length === 20);
    expect(new Set(done).size).toBe(20);
    expect(peak).toBeGreaterThan(1);
    expect(peak).toBeLessThanOrEqual(5);
  });

  it("close() lets the job in flight finish", async () => {
    const q = queue();
    let started = false;
    let finished = false;
    const worker = consume(q, async () => {
      started = true;
      await sleep(300);
      finished = true;
    });
    await bus.publish(q, { name: "slow", data: null });
    await waitFor(() => started);
    await worker.close();
    expect(finished).toBe(true);
    await waitFor(async () => (await bus.jobCounts(q)).completed === 1);
  });
});
