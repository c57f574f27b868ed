import { describe, expect, it } from "vitest";
import type { Pool } from "../src/db.js";
import { createLogger } from "../src/logger.js";
import {
  assertSchemaName,
  backoffDelay,
  createMemoryBus,
  createOutboxTable,
  eventQueueName,
  eventTypeMatches,
  injectTraceContext,
  isEventType,
  parseRetrySchedule,
  retrySchedule,
  runWithTraceContext,
  sanitizeTraceCarrier,
  setTracePropagator,
  startOutboxRelay,
  type TraceCarrier,
} from "../src/events/index.js";

describe("backoff", () => {
  it("parses the webhook retry schedule of docs/api.md", () => {
    expect(parseRetrySchedule("5s,5m,30m,2h,5h,10h,14h,20h,24h")).toEqual([
      5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000,
      86_400_000,
    ]);
    expect(parseRetrySchedule("50ms, 1.5s,200")).toEqual([50, 1_500, 200]);
    expect(() => parseRetrySchedule("5x")).toThrow(/invalid duration/);
    expect(() => parseRetrySchedule(" , ")).toThrow(/at least one/);
    expect(retrySchedule([10, 20])).toEqual({
      attempts: 3,
      backoff: { type: "schedule", delaysMs: [10, 20] },
    });
  });

  it("computes fixed, exponential (capped) and schedule delays, jitter and a minimum", () => {
    expect(backoffDelay({ type: "fixed", delayMs: 100 }, 3)).toBe(100);
    const exponential = { type: "exponential", delayMs: 100, maxDelayMs: 500 } as const;
    expect([1, 2, 3, 4, 5].map((n) => backoffDelay(exponential, n))).toEqual([
      100, 200, 400, 500, 500,
    ]);
    const schedule = { type: "schedule", delaysMs: [5, 50, 500] } as const;
    expect([1, 2, 3, 4].map((n) => backoffDelay(schedule, n))).toEqual([5, 50, 500, 500]);
    expect(backoffDelay({ type: "fixed", delayMs: 100, jitter: 0.5 }, 1, 0, () => 1)).toBe(50);
    expect(backoffDelay({ type: "fixed", delayMs: 100, jitter: 0.5 }, 1, 0, () => 0)).toBe(100);
    expect(backoffDelay({ type: "fixed", delayMs: 100 }, 1, 2_000)).toBe(2_000);
    expect(backoffDelay(undefined, 1)).toBe(0);
  });
});

describe("names and types", () => {
  it("matches event types against group patterns", () => {
    expect(eventTypeMatches("call.completed", ["call.*"])).toBe(true);
    expect(eventTypeMatches("callx.completed", ["call.*"])).toBe(false);
    expect(eventTypeMatches("number.hold_expired", ["number.held", "number.hold_expired"])).toBe(
      true,
    );
    expect(eventTypeMatches("message.sent", ["*"])).toBe(true);
    expect(eventTypeMatches("message.sent", undefined)).toBe(true);
    expect(isEventType("number.hold_expired")).toBe(true);
    expect(isEventType("Number.Held")).toBe(false);
    expect(isEventType("held")).toBe(false);
  });

  it("a relay without consumer groups is refused (its events would be marked published unsent)", () => {
    const options = {
      pool: {} as Pool,
      schema: "svc",
      bus: createMemoryBus(),
      logger: createLogger("t"),
    };
    expect(() => startOutboxRelay({ ...options, groups: [] })).toThrow(/consumer group/);
  });

  it("refuses schema and group names that are not plain identifiers", () => {
    expect(() => assertSchemaName('inventory"; DROP TABLE x; --')).toThrow(/invalid schema/);
    expect(() => createOutboxTable("Inventory")).toThrow(/invalid schema/);
    expect(createOutboxTable("inventory")).toContain(
      'CREATE TABLE IF NOT EXISTS "inventory".outbox',
    );
    expect(eventQueueName("webhook")).toBe("events.webhook");
    expect(() => eventQueueName("web:hook")).toThrow(/consumer group/);
  });
});

describe("trace-context seam", () => {
  const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

  it("keeps only well-formed W3C fields", () => {
    expect(sanitizeTraceCarrier({ traceparent, tracestate: "a=1", baggage: "user=x" })).toEqual({
      traceparent,
      tracestate: "a=1",
    });
    expect(sanitizeTraceCarrier({ traceparent: "00-abc-01" })).toBeUndefined();
    expect(
      sanitizeTraceCarrier({
        traceparent: "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
      }),
    ).toBeUndefined();
    expect(sanitizeTraceCarrier(null)).toBeUndefined();
  });

  it("injects and runs through an installed propagator, no-op without one", async () => {
    expect(injectTraceContext()).toBeUndefined();
    const runs: { carrier: TraceCarrier | undefined; link: boolean }[] = [];
    setTracePropagator({
      inject: (carrier) => void (carrier.traceparent = traceparent),
      run: (carrier, job, work) => {
        runs.push({ carrier, link: job.link });
        return work();
      },
    });
    try {
      expect(injectTraceContext()).toEqual({ traceparent });
      const info = { queue: "q", jobName: "x", jobId: "1", attempt: 1, link: true };
      await expect(runWithTraceContext({ traceparent }, info, async () => 42)).resolves.toBe(42);
      expect(runs).toEqual([{ carrier: { traceparent }, link: true }]);
    } finally {
      setTracePropagator(null);
    }
  });
});
