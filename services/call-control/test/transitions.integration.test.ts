import { callcontrol, wire } from "@switchboard/proto";
import { DomainError } from "@switchboard/kit";
import { createRealTestDatabase } from "@switchboard/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CarrierEvent } from "../src/index.js";
import { callEvents, eventually, startServiceHarness, type ServiceHarness } from "./harness.js";

const account = "acct_race";
const rank: Record<string, number> = {
  "call.placed": 0,
  "call.initiated": 1,
  "call.ringing": 2,
  "call.answered": 3,
  "call.completed": 4,
};

/** Fisher–Yates with a fixed seed, so a failure can be replayed. */
function shuffled<T>(items: T[], seed: number): T[] {
  const out = [...items];
  let state = seed;
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe("the call state machine under concurrent carrier callbacks (real PostgreSQL)", () => {
  let h: ServiceHarness;
  let from: string;
  let seatId: string;
  beforeAll(async () => {
    // The sandbox script is pushed out of the way: only the callbacks fired here move calls.
    h = await startServiceHarness(
      { name: "postgres", create: createRealTestDatabase },
      { SANDBOX_RING_DELAY_MS: "60000" },
    );
    await h.call(h.client.createAgent, { accountId: account, name: "racer" });
    seatId = (
      await h.call(h.client.createSeat, {
        accountId: account,
        name: "race seat",
        maxConcurrentCalls: 50,
      })
    ).seat!.id;
    from = await h.assignNumber(account, seatId);
  });
  afterAll(async () => h?.stop());

  const status = async (callId: string) =>
    wire.callStatus.spell(
      (await h.call(h.client.getCall, { accountId: account, callId })).call!.status,
    );

  it("ignores callbacks that arrive out of order or twice", async () => {
    const { call } = await h.call(h.client.createOutboundCall, {
      accountId: account,
      to: "+14155550999",
      from,
      agent: "racer",
    });
    const callId = call!.id;
    await eventually(
      () => status(callId),
      (s) => s === "initiated",
    );
    const engine = h.running.engine;
    const fire = (event: CarrierEvent) =>
      engine.transaction((tx) => engine.onCarrierEvent(tx, event));
    const at = new Date();
    await fire({ type: "answered", callId, at });
    await fire({ type: "ringing", callId, at });
    await fire({ type: "answered", callId, at });
    const bye = { cause: "normal_clearing", source: "callee", sipCode: 200 } as const;
    await fire({ type: "ended", callId, at, hangup: bye });
    await fire({ type: "ringing", callId, at });
    await fire({
      type: "ended",
      callId,
      at,
      hangup: { cause: "user_busy", source: "callee", sipCode: 486 },
    });
    const events = await callEvents(h.pool, callId);
    expect(events.map((e) => e.type)).toEqual([
      "call.placed",
      "call.initiated",
      "call.answered",
      "call.completed",
    ]);
    expect(await status(callId)).toBe("completed");
    const ended = (await h.call(h.client.getCall, { accountId: account, callId })).call!;
    expect(ended).toMatchObject({
      hangupCause: callcontrol.HangupCause.NORMAL_CLEARING,
      sipCode: 200,
    });
  });

  // Step by step (onCarrierEvent: each step a statement, its writes after it), and folded
  // (foldCarrierEvent: each step one statement with its event and writes, sent with the COMMIT).
  it.each([
    { mode: "step by step", first: 1000 },
    { mode: "folded", first: 2000 },
  ])(
    "applies only forward steps, emits each once, never changes a terminal call, and frees the seat exactly once ($mode)",
    async ({ mode, first }) => {
      const calls = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          h.call(h.client.createOutboundCall, {
            accountId: account,
            to: `+1415555${String(first + i)}`,
            from,
            agent: "racer",
          }),
        ),
      );
      const ids = calls.map((c) => c.call!.id);
      await eventually(
        () => Promise.all(ids.map(status)),
        (all) => all.every((s) => s === "initiated"),
      );
      const engine = h.running.engine;
      const fire = (event: CarrierEvent) =>
        engine.transaction(async (tx) => {
          if (mode === "folded") engine.foldCarrierEvent(tx, event);
          else await engine.onCarrierEvent(tx, event);
        });
      const outcomes = await Promise.all(
        ids.map((callId, index) => {
          const at = new Date();
          const events: (() => Promise<unknown>)[] = [
            () => fire({ type: "ringing", callId, at }),
            () => fire({ type: "ringing", callId, at }),
            () => fire({ type: "answered", callId, at }),
            () => fire({ type: "answered", callId, at }),
            () =>
              fire({
                type: "ended",
                callId,
                at,
                hangup: { cause: "normal_clearing", source: "callee", sipCode: 200 },
              }),
            () =>
              fire({
                type: "ended",
                callId,
                at,
                hangup: { cause: "user_busy", source: "callee", sipCode: 486 },
              }),
            () =>
              h.call(h.client.hangupCall, { accountId: account, callId }).catch((e: unknown) => e),
          ];
          // Each in its own transaction, started a few milliseconds apart in a seeded order.
          return Promise.all(
            shuffled(events, index + 1).map((run, position) =>
              new Promise((resolve) => setTimeout(resolve, (position * 7 + index) % 5)).then(run),
            ),
          );
        }),
      );
      for (const results of outcomes) {
        const hangup = results.find(
          (r) => r instanceof DomainError || (r as { call?: unknown })?.call,
        );
        if (hangup instanceof DomainError) expect(hangup.kind).toBe("invalid-state");
      }

      for (const callId of ids) {
        const events = await callEvents(h.pool, callId);
        expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1));
        const ranks = events.map((e) => rank[e.type]!);
        expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
        expect(new Set(events.map((e) => e.type)).size).toBe(events.length);
        const last = events.at(-1)!;
        expect(last.type).toBe("call.completed");
        const final = await status(callId);
        expect(["completed", "busy", "canceled"]).toContain(final);
        expect(last.data.status).toBe(final);
        expect(final === "completed").toBe(events.some((e) => e.type === "call.answered"));
      }

      // Late callbacks change nothing and emit nothing.
      const before = await h.pool.query("SELECT count(*)::int AS n FROM call_control.outbox");
      await Promise.all(
        ids.flatMap((callId) => [
          fire({ type: "answered", callId, at: new Date() }),
          fire({
            type: "ended",
            callId,
            at: new Date(),
            hangup: { cause: "network_error", source: "callee", sipCode: 503 },
          }),
        ]),
      );
      const after = await h.pool.query("SELECT count(*)::int AS n FROM call_control.outbox");
      expect(after.rows[0].n).toBe(before.rows[0].n);
      const seat = (await h.call(h.client.getSeat, { accountId: account, seatId })).seat!;
      expect(seat.activeCalls).toBe(0);
    },
  );
});
