import type { Tx } from "../scheduler/tx.js";
import { emitCallEvent } from "./call-events.js";
import { callColumns, type CallRow } from "./call-rows.js";
import { allowedFrom, unansweredStatusFor, type Hangup, type LiveStatus } from "./states.js";

/** The platform's own timers of a call; an ended call's pending ones are dropped. */
export const callTimerKinds = {
  dial: "call.dial",
  timeout: "call.timeout",
  timeLimit: "call.time_limit",
} as const;

/**
 * Forward steps of the state machine. Each is one guarded UPDATE: it applies only while the
 * call is in one of the states the step may come from, so a late, repeated or reordered
 * callback changes nothing (and emits nothing), and a terminal call never changes again.
 * Each returns the updated row, or undefined when the guard did not hold.
 * `at` is when the step happened (a timer's due time), never before the call's earlier times.
 * A step is a `StepSpec` (its guard and its SET; the SET's parameters start at $3, after the
 * call's id and the guard), sent on its own here or folded into one statement with its event
 * and its other writes (folded-steps.ts).
 */
export interface StepSpec {
  from: readonly LiveStatus[];
  set: string;
  values: unknown[];
}

async function step(tx: Tx, callId: string, spec: StepSpec): Promise<CallRow | undefined> {
  const { rows } = await tx.client.query<CallRow>(
    `UPDATE call_control.calls c SET ${spec.set}
      WHERE c.id = $1 AND c.status = ANY($2::text[])
     RETURNING ${callColumns}`,
    [callId, spec.from, ...spec.values],
  );
  return rows[0];
}

const eventTime = (param: string) =>
  `GREATEST(COALESCE(${param}::timestamptz, now()), c.created_at)`;

export const initiatedStep = (at?: Date): StepSpec => ({
  from: allowedFrom.initiated,
  set: `status = 'initiated', initiated_at = ${eventTime("$3")}`,
  values: [at ?? null],
});

export const ringingStep = (at?: Date): StepSpec => ({
  from: allowedFrom.ringing,
  set: `status = 'ringing', ringing_at = ${eventTime("$3")},
     initiated_at = COALESCE(c.initiated_at, ${eventTime("$3")})`,
  values: [at ?? null],
});

export const answeredStep = (at?: Date): StepSpec => ({
  from: allowedFrom.in_progress,
  set: `status = 'in_progress', answered_at = ${eventTime("$3")},
     initiated_at = COALESCE(c.initiated_at, ${eventTime("$3")})`,
  values: [at ?? null],
});

export interface EndOptions {
  at?: Date;
  from?: readonly LiveStatus[];
  unanswered?: boolean;
}

export const endedStep = (hangup: Hangup, options: EndOptions = {}): StepSpec => ({
  from: options.from ?? allowedFrom.ended,
  set: `status = CASE WHEN c.status = 'in_progress' AND NOT $8 THEN 'completed' ELSE $3 END,
     hangup_cause = $4, hangup_source = $5, sip_code = $6,
     answered_at = CASE WHEN $8 THEN NULL ELSE c.answered_at END,
     ended_at = GREATEST(COALESCE($7::timestamptz, now()), c.created_at, c.answered_at)`,
  values: [
    unansweredStatusFor(hangup.cause),
    hangup.cause,
    hangup.source,
    hangup.sipCode,
    options.at ?? null,
    options.unanswered ?? false,
  ],
});

export async function markInitiated(
  tx: Tx,
  callId: string,
  at?: Date,
): Promise<CallRow | undefined> {
  const row = await step(tx, callId, initiatedStep(at));
  if (row) await emitCallEvent(tx, "call.initiated", row);
  return row;
}

export async function markRinging(tx: Tx, callId: string, at?: Date): Promise<CallRow | undefined> {
  const row = await step(tx, callId, ringingStep(at));
  if (row) await emitCallEvent(tx, "call.ringing", row);
  return row;
}

/** Outbound: the callee answered. Starts the time limit and drops the ring timeout. */
export async function markAnswered(
  tx: Tx,
  callId: string,
  at?: Date,
): Promise<CallRow | undefined> {
  const row = await step(tx, callId, answeredStep(at));
  if (!row) return undefined;
  await afterAnswer(tx, row);
  await emitCallEvent(tx, "call.answered", row);
  return row;
}

/**
 * The far end's early media reached the other side (docs/api.md `early_media`): recorded on a
 * live call, no event of its own (the call's next event carries it).
 */
export async function markEarlyMedia(tx: Tx, callId: string): Promise<void> {
  await tx.client.query(earlyMediaStatement, [callId]);
}

export const earlyMediaStatement = `UPDATE call_control.calls SET early_media = true
      WHERE id = $1 AND NOT early_media
        AND status IN ('queued', 'initiated', 'ringing', 'in_progress')`;

/** What every answered call needs: its time limit timer, and no ring timeout any more. */
export async function afterAnswer(tx: Tx, row: CallRow): Promise<void> {
  await dropTimers(tx, row.id, [callTimerKinds.timeout]);
  const answeredAt = row.answered_at ?? new Date();
  await tx.schedule({
    callId: row.id,
    kind: callTimerKinds.timeLimit,
    at: new Date(answeredAt.getTime() + row.time_limit_seconds * 1000),
  });
}

/**
 * Ends a live call (from one of `from`): `completed` when it was answered (and `unanswered`
 * does not say the network never connected it: then it has no answer time, so no billable
 * seconds), otherwise the status its cause names. Releases its seat, drops its platform timers and emits
 * `call.completed` (the usage fact with the billable seconds).
 */
export async function endCall(
  tx: Tx,
  callId: string,
  hangup: Hangup,
  options: EndOptions = {},
): Promise<CallRow | undefined> {
  const row = await step(tx, callId, endedStep(hangup, options));
  if (!row) return undefined;
  if (row.seat_claimed && row.seat_id) {
    tx.defer(
      `UPDATE call_control.seats SET active_calls = active_calls - 1
        WHERE id = $1 AND active_calls > 0`,
      [row.seat_id],
    );
  }
  await dropTimers(tx, callId, Object.values(callTimerKinds));
  await emitCallEvent(tx, "call.completed", row);
  return row;
}

/** Drops pending timers of a call, skipping any a runner is firing now (it will find no work). */
export async function dropTimers(tx: Tx, callId: string, kinds: readonly string[]): Promise<void> {
  tx.defer(
    `DELETE FROM call_control.scheduled_actions
      WHERE id IN (SELECT id FROM call_control.scheduled_actions
                    WHERE call_id = $1 AND kind = ANY($2::text[])
                    FOR UPDATE SKIP LOCKED)`,
    [callId, kinds],
  );
}
