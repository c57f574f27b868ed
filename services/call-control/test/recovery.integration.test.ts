import { wire } from "@switchboard/proto";
import { testDatabaseKinds } from "@switchboard/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startServiceHarness, type ServiceHarness } from "./harness.js";

const account = "acct_recovery";
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(testDatabaseKinds)("calls survive a restart of call-control on $name", (kind) => {
  let h: ServiceHarness;
  let from: string;
  beforeAll(async () => {
    h = await startServiceHarness(kind, {
      SANDBOX_CALL_SECONDS: "0.8",
      SANDBOX_RING_DELAY_MS: "40",
    });
    await h.call(h.client.createAgent, { accountId: account, name: "night-shift" });
    from = await h.assignNumber(account);
  });
  afterAll(async () => h?.stop());

  /** The call with its status and hangup as the API spells them. */
  const get = async (callId: string) => {
    const call = (await h.call(h.client.getCall, { accountId: account, callId })).call!;
    return {
      ...call,
      status: wire.callStatus.spell(call.status),
      hangupCause: call.hangupCause && wire.hangupCause.spell(call.hangupCause),
      hangupSource: call.hangupSource && wire.hangupSource.spell(call.hangupSource),
    };
  };
  const place = async (to: string) =>
    (
      await h.call(h.client.createOutboundCall, {
        accountId: account,
        to,
        from,
        agent: "night-shift",
      })
    ).call!.id;

  it("finishes calls that were in flight, at the time they were due, and fails calls nothing can finish", async () => {
    const talking = await place("+15550100000");
    const ringingOut = await place("+15550100002");
    const stuck = await place("+14155550199");
    await eventually(
      async () => [await get(talking), await get(ringingOut), await get(stuck)],
      ([a, b, c]) =>
        a!.status === "in_progress" && b!.status === "ringing" && c!.status === "in_progress",
    );
    // The process dies; meanwhile the stuck call loses every timer (as a carrier that lost its
    // dialogs would) and the others' timers fall due.
    await h.running.stop();
    await h.pool.query("DELETE FROM call_control.scheduled_actions WHERE call_id = $1", [stuck]);
    await pause(1_200);
    await h.restart({ SANDBOX_CALL_SECONDS: "0.8", SANDBOX_RING_DELAY_MS: "40" });

    const done = await eventually(
      async () => [await get(talking), await get(ringingOut), await get(stuck)],
      (calls) => calls.every((c) => c.endedAt !== undefined),
    );
    const [a, b, c] = done;
    expect(a).toMatchObject({
      status: "completed",
      hangupCause: "normal_clearing",
      hangupSource: "callee",
    });
    // It ended when the callee hung up (answered + 0.8 s), not when the service came back.
    const talked = Date.parse(a!.endedAt!) - Date.parse(a!.answeredAt!);
    expect(talked).toBeGreaterThanOrEqual(790);
    expect(talked).toBeLessThan(1_100);
    expect(b).toMatchObject({ status: "no_answer", hangupCause: "no_answer", sipCode: 480 });
    expect(c).toMatchObject({
      status: "completed",
      hangupCause: "network_error",
      hangupSource: "platform",
    });
    const live = await h.pool.query(
      "SELECT count(*)::int AS n FROM call_control.calls WHERE status IN ('queued','initiated','ringing','in_progress')",
    );
    expect(live.rows[0].n).toBe(0);
  });
});
