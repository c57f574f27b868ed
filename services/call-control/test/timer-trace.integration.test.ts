import { context, ROOT_CONTEXT, SpanKind, trace, type SpanContext } from "@opentelemetry/api";
import { createLogger, createPool, type Pool } from "@switchboard/kit";
import { createRealTestDatabase, type TestDatabase } from "@switchboard/kit/testing";
import { installInMemoryTracing } from "@switchboard/test-support/tracing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateCallControl } from "../src/index.js";
import { createActionRunner, type ActionRunner } from "../src/scheduler/action-runner.js";
import { inTransaction, type Waker } from "../src/scheduler/tx.js";

const tracing = installInMemoryTracing();
const noWake: Waker = { wake: () => undefined };

/**
 * A durable timer continues the trace of the transaction that set it, whichever wake runs it:
 * the poll floor of any replica runs it in no request's context, so the context must travel
 * in the timer's row (as it does in the outbox's).
 */
describe("call timers carry the trace that set them (real PostgreSQL)", () => {
  let database: TestDatabase;
  let pool: Pool;
  let runner: ActionRunner;
  const ranIn = new Map<string, SpanContext | undefined>();

  beforeAll(async () => {
    database = await createRealTestDatabase("timertrace");
    pool = createPool(database.url, { max: 2, name: "timer-trace-test" });
    await migrateCallControl(pool);
    runner = createActionRunner({ pool, logger: createLogger("timer-trace-test") });
    runner.register("test.first", {
      async run(tx, action) {
        ranIn.set(`${action.callId} first`, trace.getActiveSpan()?.spanContext());
        await tx.schedule({ callId: action.callId, kind: "test.second" });
      },
    });
    runner.register("test.second", {
      async run(_tx, action) {
        ranIn.set(`${action.callId} second`, trace.getActiveSpan()?.spanContext());
      },
    });
  });
  afterAll(async () => {
    await runner?.stop();
    await pool?.end();
    await database?.drop();
    await tracing.stop();
  });

  const setTimer = (callId: string) =>
    inTransaction(pool, noWake, (tx) => tx.schedule({ callId, kind: "test.first" }));
  /** Runs what is due from the root context, as the poll floor does, until nothing is left. */
  const runDue = async () => {
    while ((await context.with(ROOT_CONTEXT, () => runner.drainDue())) > 0);
  };
  const spanOf = (ran: SpanContext | undefined) =>
    tracing.spans().find((s) => s.spanContext().spanId === ran?.spanId)!;

  it("runs a timer set in a span in a `process call timers` child of it, and the timers that one sets in a child of that", async () => {
    const setter = trace.getTracer("test").startSpan("set the timer");
    await context.with(trace.setSpan(ROOT_CONTEXT, setter), () => setTimer("call_traced"));
    setter.end();
    await runDue();

    const first = spanOf(ranIn.get("call_traced first"));
    expect(first).toMatchObject({ kind: SpanKind.CONSUMER, name: "process call timers" });
    expect(first.attributes).toMatchObject({
      "messaging.destination.name": "call timers",
      "switchboard.job.name": "test.first",
      "switchboard.job.attempt": 1,
    });
    expect(first.spanContext().traceId).toBe(setter.spanContext().traceId);
    expect(first.parentSpanContext?.spanId).toBe(setter.spanContext().spanId);

    const second = spanOf(ranIn.get("call_traced second"));
    expect(second.spanContext().traceId).toBe(setter.spanContext().traceId);
    expect(second.parentSpanContext?.spanId).toBe(first.spanContext().spanId);
    expect(second.attributes["switchboard.job.name"]).toBe("test.second");
  });

  it("runs a timer set outside any trace in a root span of its own", async () => {
    await context.with(ROOT_CONTEXT, () => setTimer("call_untraced"));
    await runDue();

    const first = spanOf(ranIn.get("call_untraced first"));
    expect(first).toMatchObject({ kind: SpanKind.CONSUMER, name: "process call timers" });
    expect(first.parentSpanContext).toBeUndefined();
    const { rows } = await pool.query(
      "SELECT count(*)::int AS n FROM call_control.scheduled_actions",
    );
    expect(rows[0].n).toBe(0);
  });
});
