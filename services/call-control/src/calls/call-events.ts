import {
  appendEventStatement,
  noteOutboxWrite,
  platformConsumerGroups,
  type ConsumerGroup,
} from "@switchboard/kit";
import type { Tx } from "../scheduler/tx.js";
import { publicCallSql, toPublicCall, type CallRow } from "./call-rows.js";

/** The call events of docs/api.md plus the usage fact `call.placed`. */
export type CallEventType =
  | "call.placed"
  | "call.initiated"
  | "call.ringing"
  | "call.answered"
  | "call.incoming"
  | "call.completed";

export const callSchema = "call_control";

/** The call events subscriptions can receive (docs/api.md); `call.placed` is a usage fact only. */
export const publicCallEvents = [
  "call.incoming",
  "call.initiated",
  "call.ringing",
  "call.answered",
  "call.completed",
] as const;

/**
 * The consumer groups call-control's relay feeds: the platform's, with the `webhook` group
 * (fan-out) given only the public call events, so no usage-only fact becomes a fan-out job.
 */
export const callRelayGroups: ConsumerGroup[] = platformConsumerGroups.map((group) =>
  group.name === "webhook" ? { ...group, types: [...publicCallEvents] } : group,
);

/**
 * Appends a call event to the outbox in the transaction of the state change it describes; the
 * per-call `sequence` orders them. `data` is the call as the REST API shows it, plus `call_id`
 * and `attestation` at the top level (the usage ledger's fact contract copies those). The
 * usage facts: `call.placed` counts one call (with the `request_id` that placed it);
 * `call.completed` measures `duration_seconds` (0 for a call never answered). The relay
 * publishes to the `usage` and `webhook` consumer groups.
 */
export async function emitCallEvent(
  tx: Tx,
  type: CallEventType,
  row: CallRow,
  extra: { requestId?: string | undefined } = {},
): Promise<void> {
  const data: Record<string, unknown> = {
    ...toPublicCall(row),
    call_id: row.id,
    attestation: row.attestation,
    ...(extra.requestId ? { request_id: extra.requestId } : {}),
  };
  // No NOTIFY (it takes a global lock on every commit of a busy call path): the commit wakes
  // this process's relay (outbox-signal in the kit); other replicas' relays poll. The append
  // travels with the transaction's COMMIT (nothing here waits for its sequence).
  const append = appendEventStatement(
    callSchema,
    { type, accountId: row.account_id, resourceId: row.id, data },
    { notify: false },
  );
  noteOutboxWrite(tx.client, callSchema);
  tx.defer(append.text, append.values);
}

/**
 * emitCallEvent's `data` in SQL, over the call row `alias` (no `request_id`: the events of a
 * call's later steps carry none).
 */
export function callEventDataSql(alias: string): string {
  return `(${publicCallSql(alias)} || jsonb_build_object('call_id', ${alias}.id, 'attestation', ${alias}.attestation))`;
}
