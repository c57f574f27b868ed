import { inlineParameters } from "@switchboard/kit";
import type { Hangup } from "../../calls/states.js";
import type { DueAction } from "../../scheduler/action-runner.js";
import { timerValuesSql, type Tx } from "../../scheduler/tx.js";
import type {
  CarrierAdapter,
  CarrierEvents,
  CarrierTimers,
  DialRequest,
  FoldedDial,
  HangupRequest,
  InboundAnswer,
} from "../../calls/carrier.js";
import {
  inboundCallerHangup,
  sandboxScript,
  type SandboxTiming,
  type ScriptStep,
} from "./sandbox-script.js";

const kinds = {
  ringing: "sandbox.ringing",
  answered: "sandbox.answered",
  ended: "sandbox.ended",
} as const;
const allKinds = Object.values(kinds);

/**
 * The deterministic simulated network (CARRIER=sandbox). Its script for each call is a set of
 * durable timers written in the dial's transaction, so a call in flight when the process dies
 * carries on (late, but to its end) when a replica runs again. Every INVITE it receives is
 * recorded in call_control.sandbox_dials with the Identity header it was handed; repeats of
 * one call's INVITE are counted there, not placed twice.
 */
export function createSandboxCarrier(timing: SandboxTiming): CarrierAdapter {
  let events: CarrierEvents | undefined;

  // Each event is one statement sent with the timer's COMMIT: the timer's whole transaction is
  // one round trip (nothing here reads the call back).
  const deliver = async (tx: Tx, action: DueAction) => {
    if (!events) throw new Error("the sandbox carrier is not attached");
    const at = action.dueAt;
    if (action.kind === kinds.ended) {
      const hangup = action.payload as unknown as Hangup;
      events.foldCarrierEvent(tx, { type: "ended", callId: action.callId, at, hangup });
    } else {
      const type = action.kind === kinds.ringing ? "ringing" : "answered";
      events.foldCarrierEvent(tx, { type, callId: action.callId, at });
    }
  };

  const script = (callId: string, steps: ScriptStep[]) =>
    steps.map((step) => ({
      callId,
      kind: kinds[step.event],
      delayMs: step.afterMs,
      ...(step.event === "ended" ? { payload: { ...step.hangup } } : {}),
    }));

  return {
    name: "sandbox",
    simulated: true,
    attach(target: CarrierEvents, timers: CarrierTimers) {
      events = target;
      for (const kind of allKinds) timers.register(kind, { run: deliver, defersOnly: true });
    },
    async dial(tx: Tx, request: DialRequest) {
      // The INVITE's record and the script travel with the COMMIT: a repeated INVITE of the
      // same dialog is counted, and does not start the script again.
      const invite = inlineParameters(
        `INSERT INTO call_control.sandbox_dials
           (call_id, to_number, from_number, identity, identity_info)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (call_id) DO UPDATE
           SET dials = sandbox_dials.dials + 1, last_dialed_at = now()
         RETURNING dials`,
        [request.callId, request.to, request.from, request.identity, request.identityInfo],
      );
      tx.scheduleWhere(
        { with: `invite AS (${invite})`, where: "(SELECT dials FROM invite) = 1" },
        script(request.callId, sandboxScript(request.to, timing)),
      );
    },
    foldDial(_tx: Tx, request: FoldedDial, param: (value: unknown) => string) {
      // dial's writes, over the dialled call `s`: the INVITE's record, and the script only for
      // the first INVITE of the dialog.
      const steps = script(request.callId, sandboxScript(request.to, timing));
      return [
        `invite AS (
           INSERT INTO call_control.sandbox_dials
             (call_id, to_number, from_number, identity, identity_info)
           SELECT s.id, s.to_number, s.from_number, coalesce(s.identity, ''), ${param(request.identityInfo)}
             FROM s
           ON CONFLICT (call_id) DO UPDATE
             SET dials = sandbox_dials.dials + 1, last_dialed_at = now()
           RETURNING dials)`,
        ...(steps.length === 0
          ? []
          : [
              `script AS (
                 INSERT INTO call_control.scheduled_actions (call_id, kind, payload, due_at, trace_carrier)
                 SELECT * FROM (${timerValuesSql(steps, param)}) AS t
                  WHERE (SELECT dials FROM invite) = 1)`,
            ]),
      ];
    },
    async answer(tx: Tx, request: InboundAnswer) {
      await tx.schedule(...script(request.callId, [inboundCallerHangup(timing)]));
    },
    async hangup(tx: Tx, request: HangupRequest) {
      // The far end hears the BYE/CANCEL: its script stops.
      await cancelScript(tx, request.callId);
    },
    async recover() {
      // The script lives in durable timers: nothing of a previous process is left to end.
      return 0;
    },
    async stop() {
      events = undefined;
    },
  };
}

/** Drops a call's pending network events, skipping any a runner is firing right now. */
async function cancelScript(tx: Tx, callId: string) {
  tx.defer(
    `DELETE FROM call_control.scheduled_actions
      WHERE id IN (SELECT id FROM call_control.scheduled_actions
                    WHERE call_id = $1 AND kind = ANY($2::text[])
                    FOR UPDATE SKIP LOCKED)`,
    [callId, allKinds],
  );
}
