import { describe, expect, it } from "vitest";
import { createLogger, newId } from "@switchboard/kit";
import type { usage } from "@switchboard/proto";
import { RecordPublisher, type RecordSink } from "@switchboard/gateway/records/record-publisher";

/** Unit tests of the gateway's record publisher (group commit, degraded mode) with a scripted sink. */
const logger = createLogger("usage-test", { level: "silent" });

const record = (): usage.RequestRecord => ({
  requestId: newId("req"),
  occurredAt: new Date().toISOString(),
  accountId: "acct_test",
  method: "GET",
  status: 200,
  latencyMs: 1,
  replayed: false,
});

interface Call {
  ids: string[];
  batchId: string;
  settle(error?: Error): void;
}

/** A sink whose publishes stay pending until the test settles them. */
function scriptedSink(): { sink: RecordSink; calls: Call[] } {
  const calls: Call[] = [];
  const sink: RecordSink = (records, batchId) =>
    new Promise<void>((resolve, reject) => {
      calls.push({
        ids: records.map((r) => r.requestId),
        batchId,
        settle: (error) => (error ? reject(error) : resolve()),
      });
    });
  return { sink, calls };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const settledState = async (promise: Promise<unknown>) => {
  let done = false;
  void promise.then(() => (done = true));
  await tick();
  return done;
};

describe("the gateway's record publisher", () => {
  it("holds a reply until its record is queued, and publishes a lone record at once", async () => {
    const { sink, calls } = scriptedSink();
    const publisher = new RecordPublisher({ sink, logger, timeoutMs: 10_000 });
    const r = record();
    const handedOff = publisher.record(r);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ ids: [r.requestId], batchId: r.requestId });
    expect(await settledState(handedOff)).toBe(false);
    calls[0]!.settle();
    expect(await settledState(handedOff)).toBe(true);
  });

  it("lets records that arrive during publishes share the next batch", async () => {
    const { sink, calls } = scriptedSink();
    const publisher = new RecordPublisher({ sink, logger, timeoutMs: 10_000, maxInFlight: 2 });
    const first = [publisher.record(record()), publisher.record(record())];
    const waiting = Array.from({ length: 5 }, () => publisher.record(record()));
    expect(calls.map((c) => c.ids.length)).toEqual([1, 1]);
    calls[0]!.settle();
    await tick();
    expect(calls.map((c) => c.ids.length)).toEqual([1, 1, 5]);
    calls[1]!.settle();
    calls[2]!.settle();
    await Promise.all([...first, ...waiting]);
    expect(publisher.stats).toMatchObject({ records: 7, batches: 3, failures: 0, released: 0 });
  });

  it("goes degraded when the queue fails: replies stop waiting, the batch is retried with its id", async () => {
    const { sink, calls } = scriptedSink();
    const publisher = new RecordPublisher({ sink, logger, timeoutMs: 10_000, maxInFlight: 1 });
    const r = record();
    const handedOff = publisher.record(r);
    calls[0]!.settle(new Error("redis is down"));
    await handedOff;
    expect(publisher.backlog).toBe(1);
    // Degraded: the next reply does not wait for its record.
    const next = record();
    expect(await settledState(publisher.record(next))).toBe(true);
    expect(calls[1]!.ids).toEqual([next.requestId]);
    calls[1]!.settle();
    await new Promise((resolve) => setTimeout(resolve, 150));
    const retried = calls.filter((c) => c.ids.includes(r.requestId));
    expect(retried.length).toBe(2);
    expect(retried.every((c) => c.batchId === r.requestId)).toBe(true);
    retried[1]!.settle();
    await tick();
    expect(publisher.backlog).toBe(0);
    // Recovered: replies wait for their record again.
    const after = publisher.record(record());
    expect(await settledState(after)).toBe(false);
    calls.at(-1)!.settle();
    await after;
    expect(publisher.stats.failures).toBe(1);
  });

  it("sends a reply after timeoutMs when the queue is slow, without losing the record", async () => {
    const { sink, calls } = scriptedSink();
    const publisher = new RecordPublisher({ sink, logger, timeoutMs: 30 });
    const started = Date.now();
    await publisher.record(record());
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    expect(publisher.stats.released).toBe(1);
    calls[0]!.settle();
    await tick();
    expect(publisher.backlog).toBe(0);
    expect(calls).toHaveLength(1);
  });

  it("bounds its memory while the queue is away, dropping the oldest records", async () => {
    const { sink, calls } = scriptedSink();
    const publisher = new RecordPublisher({
      sink,
      logger,
      timeoutMs: 1,
      maxInFlight: 1,
      maxBatch: 2,
      maxBacklog: 6,
    });
    await publisher.record(record());
    await new Promise((resolve) => setTimeout(resolve, 5));
    for (let i = 0; i < 10; i += 1) await publisher.record(record());
    expect(publisher.backlog).toBeLessThanOrEqual(6);
    expect(publisher.stats.dropped).toBeGreaterThan(0);
    expect(calls).toHaveLength(1);
  });

  it("hands off what is left when closed", async () => {
    const published: string[] = [];
    const publisher = new RecordPublisher({
      sink: async (records) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        published.push(...records.map((r) => r.requestId));
      },
      logger,
      timeoutMs: 1,
      maxInFlight: 1,
    });
    const ids = Array.from({ length: 20 }, () => {
      const r = record();
      void publisher.record(r);
      return r.requestId;
    });
    await publisher.close(2_000);
    expect(published.sort()).toEqual(ids.sort());
  });
});
