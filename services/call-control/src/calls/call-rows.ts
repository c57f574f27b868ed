import {
  epochMillisecondsSql,
  isoTimestampSql,
  jsonCodec,
  type KeyedOperation,
} from "@switchboard/kit";
import { wire, type callcontrol } from "@switchboard/proto";
import { isTerminal, liveStatuses } from "./states.js";

/** A row of call_control.calls as the queries here select it (`callColumns`). */
export interface CallRow {
  id: string;
  account_id: string;
  direction: string;
  status: string;
  to_number: string;
  from_number: string;
  agent: string | null;
  seat_id: string | null;
  seat_claimed: boolean;
  route_id: string | null;
  attestation: wire.AttestationValue | null;
  identity: string | null;
  client_state: string | null;
  timeout_seconds: number;
  time_limit_seconds: number;
  hangup_cause: string | null;
  hangup_source: string | null;
  sip_code: number | null;
  early_media: boolean;
  request_fingerprint: string | null;
  created_at: Date;
  answered_at: Date | null;
  ended_at: Date | null;
  status_callback: { url: string; events: string[] } | null;
}

export const callColumns = `c.id, c.account_id, c.direction, c.status, c.to_number, c.from_number,
  c.agent, c.seat_id, c.seat_claimed, c.route_id, c.attestation, c.identity, c.client_state,
  c.timeout_seconds, c.time_limit_seconds, c.hangup_cause, c.hangup_source, c.sip_code,
  c.early_media, c.request_fingerprint, c.created_at, c.answered_at, c.ended_at, c.status_callback`;

const dateOrNull = (value: Date | null) => (value === null ? null : new Date(value));

/** A call row kept as a keyed operation's answer (kit runOnce): JSON, its times revived. */
export const callRowCodec = jsonCodec<CallRow>((row) => ({
  ...row,
  created_at: new Date(row.created_at),
  answered_at: dateOrNull(row.answered_at),
  ended_at: dateOrNull(row.ended_at),
}));

/** A call's state change run once per Idempotency-Key (kit runOnce), its answer the call row. */
export const keyedCallChange = (
  operation: string,
  request: { accountId: string },
  key: string | undefined,
): KeyedOperation<CallRow> => ({
  schema: "call_control",
  operation,
  accountId: request.accountId,
  key,
  request,
  codec: callRowCodec,
});

/** Billable seconds: answered to ended, rounded up; 0 for a call never answered; null while live. */
export function durationSeconds(
  row: Pick<CallRow, "status" | "answered_at" | "ended_at">,
): number | null {
  if (!isTerminal(row.status) || !row.ended_at) return null;
  if (!row.answered_at) return 0;
  return Math.max(0, Math.ceil((row.ended_at.getTime() - row.answered_at.getTime()) / 1000));
}

export function toCall(row: CallRow): callcontrol.Call {
  return {
    id: row.id,
    direction: wire.callDirection.of(row.direction as wire.CallDirectionValue),
    status: wire.callStatus.of(row.status as wire.CallStatusValue),
    to: row.to_number,
    from: row.from_number,
    agent: row.agent ?? undefined,
    seatId: row.seat_id ?? undefined,
    routeId: row.route_id ?? undefined,
    stirShaken:
      row.attestation && row.identity
        ? { attestation: wire.attestation.of(row.attestation), identity: row.identity }
        : undefined,
    clientState: row.client_state ?? undefined,
    timeoutSeconds: row.timeout_seconds,
    timeLimitSeconds: row.time_limit_seconds,
    hangupCause: row.hangup_cause
      ? wire.hangupCause.of(row.hangup_cause as wire.HangupCauseValue)
      : undefined,
    hangupSource: row.hangup_source
      ? wire.hangupSource.of(row.hangup_source as wire.HangupSourceValue)
      : undefined,
    sipCode: row.sip_code ?? undefined,
    earlyMedia: row.early_media,
    createdAt: row.created_at.toISOString(),
    answeredAt: row.answered_at?.toISOString(),
    endedAt: row.ended_at?.toISOString(),
    durationSeconds: durationSeconds(row) ?? undefined,
    statusCallback: row.status_callback ?? undefined,
  };
}

/**
 * The call as the public JSON of docs/api.md (the REST representation, snake_case, nulls for unset
 * fields): the `data` of every call event.
 */
export function toPublicCall(row: CallRow): Record<string, unknown> {
  return {
    id: row.id,
    direction: row.direction,
    status: row.status,
    to: row.to_number,
    from: row.from_number,
    agent: row.agent,
    seat_id: row.seat_id,
    route_id: row.route_id,
    stir_shaken:
      row.attestation && row.identity
        ? { attestation: row.attestation, identity: row.identity }
        : null,
    client_state: row.client_state,
    timeout_seconds: row.timeout_seconds,
    time_limit_seconds: row.time_limit_seconds,
    hangup_cause: row.hangup_cause,
    hangup_source: row.hangup_source,
    sip_code: row.sip_code,
    early_media: row.early_media,
    created_at: row.created_at.toISOString(),
    answered_at: row.answered_at?.toISOString() ?? null,
    ended_at: row.ended_at?.toISOString() ?? null,
    duration_seconds: durationSeconds(row),
    status_callback: row.status_callback,
  };
}

/**
 * toPublicCall in SQL, over a row of call_control.calls named `alias` (e.g. the RETURNING row
 * of a state change's CTE): the same JSON, so a step's event can be written in the statement
 * of the step itself (transitions' folded steps). test/call-event-data.integration.test.ts
 * holds the two to the same output for rows in every state.
 */
export function publicCallSql(alias: string): string {
  const c = (column: string) => `${alias}.${column}`;
  const live = liveStatuses.map((s) => `'${s}'`).join(", ");
  return `jsonb_build_object(
    'id', ${c("id")}, 'direction', ${c("direction")}, 'status', ${c("status")},
    'to', ${c("to_number")}, 'from', ${c("from_number")}, 'agent', ${c("agent")},
    'seat_id', ${c("seat_id")}, 'route_id', ${c("route_id")},
    'stir_shaken', CASE WHEN coalesce(${c("attestation")}, '') <> '' AND coalesce(${c("identity")}, '') <> ''
      THEN jsonb_build_object('attestation', ${c("attestation")}, 'identity', ${c("identity")}) END,
    'client_state', ${c("client_state")}, 'timeout_seconds', ${c("timeout_seconds")},
    'time_limit_seconds', ${c("time_limit_seconds")}, 'hangup_cause', ${c("hangup_cause")},
    'hangup_source', ${c("hangup_source")}, 'sip_code', ${c("sip_code")},
    'early_media', ${c("early_media")}, 'created_at', ${isoTimestampSql(c("created_at"))},
    'answered_at', ${isoTimestampSql(c("answered_at"))}, 'ended_at', ${isoTimestampSql(c("ended_at"))},
    'duration_seconds', CASE
      WHEN ${c("status")} IN (${live}) OR ${c("ended_at")} IS NULL THEN NULL
      WHEN ${c("answered_at")} IS NULL THEN 0
      ELSE GREATEST(0, ceil((${epochMillisecondsSql(c("ended_at"))} - ${epochMillisecondsSql(c("answered_at"))}) / 1000))::int
    END,
    'status_callback', ${c("status_callback")})`;
}
