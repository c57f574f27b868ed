import { appendEventCtes, noteOutboxWrite } from "@switchboard/kit";
import { timerTraceCarrier, type Tx } from "../scheduler/tx.js";
import { callEventDataSql, callSchema, type CallEventType } from "./call-events.js";
import { callColumns } from "./call-rows.js";
import type { Hangup } from "./states.js";
import {
  answeredStep,
  callTimerKinds,
  endedStep,
  initiatedStep,
  ringingStep,
  type EndOptions,
  type StepSpec,
} from "./transitions.js";

/**
 * A step of the state machine and everything that goes with it — its event, the timers it sets
 * and drops, the seat it releases — as ONE statement (data-modifying CTEs over the updated row
 * `s`), sent with the transaction's COMMIT. Each write happens only when the guarded UPDATE
 * returned its row, as the step-by-step path (transitions.ts) does it; the event's data is the
 * row as the step left it (callEventDataSql, the same JSON as emitCallEvent's). A timer step
 * whose handler sends only this is one round trip: BEGIN, the step, the timer's deletion and
 * COMMIT in one simple query (scheduler/tx.ts), the step run from the connection's prepared
 * statement (its text is fixed per step). Nothing here learns whether the step applied:
 * it is for callers that need no answer (the sandbox network's script).
 */
function foldStep(
  tx: Tx,
  callId: string,
  spec: StepSpec,
  event: CallEventType,
  more: (param: (value: unknown) => string) => string[] = () => [],
): void {
  const values: unknown[] = [callId, spec.from, ...spec.values];
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  const eventCtes = appendEventCtes(
    callSchema,
    {
      source: "s",
      type: event,
      accountId: "s.account_id",
      resourceId: "s.id",
      data: callEventDataSql("s"),
    },
    param,
  );
  const writes = more(param);
  noteOutboxWrite(tx.client, callSchema);
  tx.defer(
    `WITH s AS (
       UPDATE call_control.calls c SET ${spec.set}
        WHERE c.id = $1 AND c.status = ANY($2::text[])
       RETURNING ${callColumns}
     ), ${[eventCtes, ...writes].join(", ")}
     SELECT count(*) FROM s`,
    values,
    { prepared: true },
  );
}

/** Drops the call's pending timers of `kinds` where the step applied (skipping one being fired). */
const dropTimersWhereApplied = (param: (value: unknown) => string, kinds: readonly string[]) =>
  `dropped AS (
     DELETE FROM call_control.scheduled_actions
      WHERE id IN (SELECT id FROM call_control.scheduled_actions
                    WHERE call_id = $1 AND kind = ANY(${param(kinds)}::text[])
                    FOR UPDATE SKIP LOCKED)
        AND EXISTS (SELECT 1 FROM s))`;

/**
 * The dial timer's step, folded: the call initiated, the carrier's dial (its foldDial writes,
 * over `s`) and the ring timeout, from the call's own timeout_seconds.
 */
export function foldDialled(
  tx: Tx,
  callId: string,
  dial: (param: (value: unknown) => string) => string[],
): void {
  foldStep(tx, callId, initiatedStep(), "call.initiated", (param) => [
    ...dial(param),
    `timeout AS (
       INSERT INTO call_control.scheduled_actions (call_id, kind, payload, due_at, trace_carrier)
       SELECT s.id, ${param(callTimerKinds.timeout)},
              ${param(JSON.stringify({ cause: "timeout", source: "platform", sipCode: 487 }))}::jsonb,
              now() + make_interval(secs => s.timeout_seconds), ${param(timerTraceCarrier())}::jsonb
         FROM s)`,
  ]);
}

/** markRinging, folded. */
export function foldRinging(tx: Tx, callId: string, at?: Date): void {
  foldStep(tx, callId, ringingStep(at), "call.ringing");
}

/** markAnswered, folded: the ring timeout dropped, the time limit set from the answer. */
export function foldAnswered(tx: Tx, callId: string, at?: Date): void {
  foldStep(tx, callId, answeredStep(at), "call.answered", (param) => [
    dropTimersWhereApplied(param, [callTimerKinds.timeout]),
    `time_limit AS (
       INSERT INTO call_control.scheduled_actions (call_id, kind, payload, due_at, trace_carrier)
       SELECT s.id, ${param(callTimerKinds.timeLimit)}, '{}'::jsonb,
              COALESCE(s.answered_at, now()) + make_interval(secs => s.time_limit_seconds),
              ${param(timerTraceCarrier())}::jsonb
         FROM s)`,
  ]);
}

/** endCall, folded: the seat released (when the call counted against it), its timers dropped. */
export function foldEnded(tx: Tx, callId: string, hangup: Hangup, options: EndOptions = {}): void {
  foldStep(tx, callId, endedStep(hangup, options), "call.completed", (param) => [
    `released AS (
       UPDATE call_control.seats t SET active_calls = t.active_calls - 1
         FROM s WHERE t.id = s.seat_id AND s.seat_claimed AND t.active_calls > 0)`,
    dropTimersWhereApplied(param, Object.values(callTimerKinds)),
  ]);
}
