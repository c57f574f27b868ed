import {
  checkIdempotencyKey,
  DomainError,
  newId,
  type Pool,
  type Queryable,
  replayOrMismatch,
  validationFailed,
} from "@switchboard/kit";
import type { callcontrol } from "@switchboard/proto";
import type { NumberDirectory } from "../inventory-directory.js";
import { createOnce, keyWindow } from "../resources/resource-keys.js";
import { timerTraceCarrier, type Tx } from "../scheduler/tx.js";
import type { PassportSigner } from "../stir-shaken/passport.js";
import { emitCallEvent } from "./call-events.js";
import type { CallEngine } from "./call-engine.js";
import { callColumns, type CallRow } from "./call-rows.js";
import { parseOutboundRequest, type OutboundRequest } from "./outbound-request.js";
import { seatClaimStatement, seatRefusal } from "./seat-claims.js";
import { callTimerKinds } from "./transitions.js";

export interface OutboundDeps {
  pool: Pool;
  engine: CallEngine;
  directory: NumberDirectory;
  signer: PassportSigner;
  /** The PASSporT's x5u: the public URL of the certificate. */
  certificateUrl: string;
}

export interface PlacedCall {
  row: CallRow;
  /** The Idempotency-Key named a call placed earlier; nothing was placed now. */
  replayed: boolean;
}

type Settled<T> = { value: T } | { error: unknown };
const settle = <T>(promise: Promise<T>): Promise<Settled<T>> =>
  promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
const unwrap = <T>(settled: Settled<T>): T => {
  if ("error" in settled) throw settled.error;
  return settled.value;
};

/**
 * CreateOutboundCall. Looks up, side by side, the call an Idempotency-Key already placed, the
 * caller id (inventory, over gRPC) and the agent; takes the seat (the request's, else the
 * number's); signs the PASSporT
 * (attestation A when `from` is assigned to the account and to the call's seat, B when only to
 * the account); then in one transaction stores the call `queued` with its key (unique per
 * account) and its dial timer, claims the seat and appends `call.placed`. The dial happens
 * after commit, so one key is one call on the network whatever the retries: a concurrent
 * duplicate waits on the key's unique index, then returns the call that won.
 */
export async function createOutboundCall(
  deps: OutboundDeps,
  request: callcontrol.CreateOutboundCallRequest,
  idempotencyKey: string | undefined,
  requestId?: string,
): Promise<PlacedCall> {
  checkIdempotencyKey(idempotencyKey);
  const call = parseOutboundRequest(request);
  const [lookup, number] = await Promise.all([
    settle(lookupOutbound(deps.pool, call, idempotencyKey)),
    settle(deps.directory.owned(call.accountId, call.from)),
  ]);
  const { earlier, agent } = unwrap(lookup);
  if (earlier) return { row: earlier, replayed: true };
  const owned = unwrap(number);
  if (!owned) {
    throw new DomainError(
      "caller-id-not-owned",
      `${call.from} is not a number assigned to this account`,
    );
  }
  if (!agent) {
    throw validationFailed([
      { pointer: "#/agent", detail: `no agent of this account is named ${call.agent}` },
    ]);
  }
  // The number's seat, when the request names none, counts only if it is a seat of this
  // account (inventory cannot check): assumed here, and checked by the seat's claim in the
  // placement's own statement (the claim names the account). A seat of no such account has the
  // call placed again without a seat (attestation B), as if the number had none.
  const numberSeat = call.seatId === undefined ? owned.seatId : undefined;
  const placing = { agent, ownedSeat: owned.seatId, idempotencyKey, requestId };
  try {
    return await place(deps, call, { ...placing, seatId: call.seatId ?? numberSeat });
  } catch (error) {
    if (!(error instanceof NotAccountSeat)) throw error;
    return place(deps, call, { ...placing, seatId: undefined });
  }
}

/** The number's seat is not a seat of the call's account: place the call without it. */
class NotAccountSeat extends Error {}

/**
 * Signs the PASSporT (attestation A when the call's seat is the number's, B otherwise), then in
 * one transaction stores the call with its dial timer and its seat's claim, and its event.
 */
async function place(
  deps: OutboundDeps,
  call: OutboundRequest,
  options: {
    agent: string;
    seatId: string | undefined;
    ownedSeat: string | undefined;
    idempotencyKey: string | undefined;
    requestId: string | undefined;
  },
): Promise<PlacedCall> {
  const { agent, seatId, idempotencyKey, requestId } = options;
  const attest = seatId !== undefined && seatId === options.ownedSeat ? "A" : "B";
  const x5u = deps.certificateUrl;
  const { identity } = await deps.signer.sign({ attest, from: call.from, to: call.to, x5u });

  return deps.engine.transaction(async (tx) => {
    const insert = () =>
      insertCall(tx, call, {
        agent,
        seatId,
        attest,
        identity,
        x5u,
        key: idempotencyKey,
      });
    const made = await createOnce(tx.client, "calls", call.accountId, idempotencyKey, insert, () =>
      callByKey(tx.client, call, idempotencyKey!),
    );
    if (made.replayed) return { row: made.row, replayed: true };
    const row = made.row;
    if (seatId !== undefined && !row.seat_claimed_now) {
      const refusal = await seatRefusal(tx, call.accountId, seatId, { pointer: "#/seat_id" });
      // The transaction rolls back (the call with it) whichever is thrown.
      if (refusal.notFound && call.seatId === undefined) throw new NotAccountSeat();
      throw refusal.error;
    }
    const { seat_claimed_now: _claimed, ...placed } = row;
    await emitCallEvent(tx, "call.placed", placed, { requestId });
    return { row: placed, replayed: false };
  });
}

/**
 * Inserts the call `queued` together with its dial timer (due now) and, when it has a seat, the
 * seat's claim (seatClaimStatement), in one statement; undefined on a key conflict.
 * `seat_claimed_now` says whether the claim applied (the caller refuses the call if not: its
 * transaction then rolls back, the insert with it).
 */
async function insertCall(
  tx: Tx,
  call: OutboundRequest,
  fields: {
    agent: string;
    seatId: string | undefined;
    attest: string;
    identity: string;
    x5u: string;
    key: string | undefined;
  },
): Promise<(CallRow & { seat_claimed_now: boolean }) | undefined> {
  const { rows } = await tx.client.query<CallRow & { seat_claimed_now: boolean }>(
    `WITH c AS (
       INSERT INTO call_control.calls
         (id, account_id, direction, status, to_number, from_number, agent, seat_id, seat_claimed,
          attestation, identity, client_state, timeout_seconds, time_limit_seconds,
          idempotency_key, request_fingerprint, status_callback)
       VALUES ($1, $2, 'outbound', 'queued', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14,
               $18::jsonb)
       ON CONFLICT (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
       RETURNING *
     ), dial AS (
       INSERT INTO call_control.scheduled_actions (call_id, kind, payload, due_at, trace_carrier)
       SELECT id, $15, $16::jsonb, now(), $17::jsonb FROM c
     ), seat AS (
       ${seatClaimStatement("$6", "$2", "$7 AND EXISTS (SELECT 1 FROM c)")}
     )
     SELECT ${callColumns}, EXISTS (SELECT 1 FROM seat) AS seat_claimed_now FROM c`,
    [
      newId("call"),
      call.accountId,
      call.to,
      call.from,
      fields.agent,
      fields.seatId ?? null,
      fields.seatId !== undefined,
      fields.attest,
      fields.identity,
      call.clientState ?? null,
      call.timeoutSeconds,
      call.timeLimitSeconds,
      fields.key ?? null,
      call.fingerprint,
      callTimerKinds.dial,
      // The dial's timer knows where it goes (a carrier's folded dial picks its script by it).
      JSON.stringify({ identity_info: fields.x5u, to: call.to }),
      timerTraceCarrier(),
      call.statusCallback ? JSON.stringify(call.statusCallback) : null,
    ],
  );
  const row = rows[0];
  if (row) tx.wakeAt(Date.now());
  return row;
}

/**
 * One round trip for what the database knows before anything is placed: the agent, and the
 * call the Idempotency-Key already placed (within its window).
 */
async function lookupOutbound(
  db: Queryable,
  call: OutboundRequest,
  key: string | undefined,
): Promise<{ agent: string | undefined; earlier: CallRow | undefined }> {
  const { rows } = await db.query<CallRow & { agent_name: string | null }>(
    `SELECT a.name AS agent_name, ${callColumns}
         FROM (SELECT 1) AS one
         LEFT JOIN call_control.agents a ON a.account_id = $1 AND a.name = $2
         LEFT JOIN call_control.calls c
           ON c.account_id = $1 AND c.idempotency_key = $3
          AND c.created_at > now() - interval '${keyWindow}'`,
    [call.accountId, call.agent, key ?? null],
  );
  const row = rows[0];
  const earlier = row?.id ? row : undefined;
  if (earlier) checkSameRequest(earlier, call);
  return { agent: row?.agent_name ?? undefined, earlier };
}

const checkSameRequest = (row: CallRow, call: OutboundRequest) =>
  replayOrMismatch(row, call.fingerprint, row);

/** The call an Idempotency-Key placed within its window; another request under it is a mismatch. */
async function callByKey(
  db: Queryable,
  call: OutboundRequest,
  key: string,
): Promise<CallRow | undefined> {
  const { rows } = await db.query<CallRow>(
    `SELECT ${callColumns} FROM call_control.calls c
      WHERE c.account_id = $1 AND c.idempotency_key = $2 AND c.created_at > now() - interval '${keyWindow}'`,
    [call.accountId, key],
  );
  const row = rows[0];
  if (row) checkSameRequest(row, call);
  return row;
}
