import {
  appendEventCtes,
  checkIdempotencyKey,
  DomainError,
  newId,
  noteOutboxWrite,
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
import { callEventDataSql, callSchema } from "./call-events.js";
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

/**
 * CreateOutboundCall. Checks the caller id (inventory, over gRPC); takes the seat (the
 * request's, else the number's); signs the PASSporT (attestation A when `from` is assigned to
 * the account and to the call's seat, B when only to the account); then in ONE statement
 * (insertCall) stores the call `queued` with its key (unique per account) and its dial
 * timer, claims the seat and appends `call.placed`, where the agent is the account's. The dial
 * happens after it, so one key is one call on the network whatever the retries: a concurrent
 * duplicate waits on the key's unique index, then returns the call that won. A key that placed a
 * call within its window answers with that call, whatever has changed since (the number
 * released, the agent deleted, inventory unreachable).
 */
export async function createOutboundCall(
  deps: OutboundDeps,
  request: callcontrol.CreateOutboundCallRequest,
  idempotencyKey: string | undefined,
  requestId?: string,
): Promise<PlacedCall> {
  checkIdempotencyKey(idempotencyKey);
  const call = parseOutboundRequest(request);
  /** The call the key placed earlier, if any; else `error`. */
  const earlierOr = async (error: unknown): Promise<PlacedCall> => {
    const earlier =
      idempotencyKey === undefined ? undefined : await callByKey(deps.pool, call, idempotencyKey);
    if (earlier) return { row: earlier, replayed: true };
    throw error;
  };
  let owned: Awaited<ReturnType<NumberDirectory["owned"]>>;
  try {
    owned = await deps.directory.owned(call.accountId, call.from);
  } catch (error) {
    return earlierOr(error);
  }
  if (!owned) {
    return earlierOr(
      new DomainError(
        "caller-id-not-owned",
        `${call.from} is not a number assigned to this account`,
      ),
    );
  }
  // The number's seat, when the request names none, counts only if it is a seat of this
  // account (inventory cannot check): assumed here, and checked by the seat's claim in the
  // placement's own statement (the claim names the account). A seat of no such account has the
  // call placed again without a seat (attestation B), as if the number had none.
  const numberSeat = call.seatId === undefined ? owned.seatId : undefined;
  const placing = { ownedSeat: owned.seatId, idempotencyKey, requestId };
  try {
    try {
      return await place(deps, call, { ...placing, seatId: call.seatId ?? numberSeat });
    } catch (error) {
      if (!(error instanceof NotAccountSeat)) throw error;
      return await place(deps, call, { ...placing, seatId: undefined });
    }
  } catch (error) {
    if (!(error instanceof NoSuchAgent)) throw error;
    return earlierOr(
      validationFailed([
        { pointer: "#/agent", detail: `no agent of this account is named ${call.agent}` },
      ]),
    );
  }
}

/** The number's seat is not a seat of the call's account: place the call without it. */
class NotAccountSeat extends Error {}

/** The request's agent is no agent of the call's account. */
class NoSuchAgent extends Error {}

/**
 * Signs the PASSporT (attestation A when the call's seat is the number's, B otherwise), then in
 * one statement stores the call with its dial timer, its seat's claim and its event.
 */
async function place(
  deps: OutboundDeps,
  call: OutboundRequest,
  options: {
    seatId: string | undefined;
    ownedSeat: string | undefined;
    idempotencyKey: string | undefined;
    requestId: string | undefined;
  },
): Promise<PlacedCall> {
  const { seatId, idempotencyKey, requestId } = options;
  const attest = seatId !== undefined && seatId === options.ownedSeat ? "A" : "B";
  const x5u = deps.certificateUrl;
  const { identity } = await deps.signer.sign({ attest, from: call.from, to: call.to, x5u });

  return deps.engine.oneStatement(async (tx) => {
    const insert = async () => {
      try {
        return await insertCall(tx, call, {
          seatId,
          attest,
          identity,
          x5u,
          idempotencyKey,
          requestId,
        });
      } catch (error) {
        if (!isPlacementRefused(error) || seatId === undefined) throw error;
        const refusal = await seatRefusal(tx.client, call.accountId, seatId, {
          pointer: "#/seat_id",
        });
        if (refusal.notFound && call.seatId === undefined) throw new NotAccountSeat();
        throw refusal.error;
      }
    };
    const made = await createOnce(tx.client, "calls", call.accountId, idempotencyKey, insert, () =>
      callByKey(tx.client, call, idempotencyKey!),
    );
    return { row: made.row, replayed: made.replayed };
  });
}

/** The SQLSTATE of call_control.refuse_placement: the seat took no claim. */
const isPlacementRefused = (error: unknown) =>
  (error as { code?: unknown } | undefined)?.code === "SBS01";

/**
 * Places the call in one statement: inserts it `queued`, where `call.agent` names an agent of
 * the account, together with its dial timer (due now), its `call.placed` event and, when it has
 * a seat, the seat's claim (seatClaimStatement) — a seat that takes no claim aborts the whole
 * statement (call_control.refuse_placement, SQLSTATE SBS01). Undefined on a key conflict;
 * NoSuchAgent when the account has no such agent.
 */
async function insertCall(
  tx: Tx,
  call: OutboundRequest,
  fields: {
    seatId: string | undefined;
    attest: string;
    identity: string;
    x5u: string;
    idempotencyKey: string | undefined;
    requestId: string | undefined;
  },
): Promise<CallRow | undefined> {
  const values: unknown[] = [
    newId("call"),
    call.accountId,
    call.to,
    call.from,
    call.agent,
    fields.seatId ?? null,
    fields.seatId !== undefined,
    fields.attest,
    fields.identity,
    call.clientState ?? null,
    call.timeoutSeconds,
    call.timeLimitSeconds,
    fields.idempotencyKey ?? null,
    call.fingerprint,
    callTimerKinds.dial,
    // The dial's timer knows where it goes (a carrier's folded dial picks its script by it).
    JSON.stringify({ identity_info: fields.x5u, to: call.to }),
    timerTraceCarrier(),
    call.statusCallback ? JSON.stringify(call.statusCallback) : null,
  ];
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  // call.placed's data: the call as emitCallEvent shows it, with the request that placed it.
  const requestIdSql = fields.requestId
    ? ` || jsonb_build_object('request_id', ${param(fields.requestId)}::text)`
    : "";
  const event = appendEventCtes(
    callSchema,
    {
      source: "c",
      type: "call.placed",
      accountId: "c.account_id",
      resourceId: "c.id",
      data: `(${callEventDataSql("c")}${requestIdSql})`,
    },
    param,
  );
  noteOutboxWrite(tx.client, callSchema);
  const { rows } = await tx.client.query<CallRow & { agent_found: boolean; refused: string }>(
    `WITH agent AS (
       SELECT name FROM call_control.agents WHERE account_id = $2 AND name = $5
     ), c AS (
       INSERT INTO call_control.calls
         (id, account_id, direction, status, to_number, from_number, agent, seat_id, seat_claimed,
          attestation, identity, client_state, timeout_seconds, time_limit_seconds,
          idempotency_key, request_fingerprint, status_callback)
       SELECT $1, $2, 'outbound', 'queued', $3, $4, agent.name, $6, $7, $8, $9, $10, $11, $12, $13,
              $14, $18::jsonb
         FROM agent
       ON CONFLICT (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
       RETURNING *
     ), dial AS (
       INSERT INTO call_control.scheduled_actions (call_id, kind, payload, due_at, trace_carrier)
       SELECT id, $15, $16::jsonb, now(), $17::jsonb FROM c
     ), seat AS (
       ${seatClaimStatement("$6", "$2", "$7 AND EXISTS (SELECT 1 FROM c)")}
     ), refused AS (
       SELECT call_control.refuse_placement($6) FROM c WHERE $7 AND NOT EXISTS (SELECT 1 FROM seat)
     ), ${event}
     SELECT EXISTS (SELECT 1 FROM agent) AS agent_found, (SELECT count(*) FROM refused) AS refused,
            ${callColumns}
       FROM (SELECT 1) AS one LEFT JOIN c ON true`,
    values,
  );
  const row = rows[0]!;
  if (!row.agent_found) throw new NoSuchAgent();
  if (row.id === null) return undefined;
  tx.wakeAt(Date.now());
  // `refused` is read only so that its CTE runs (one that modifies nothing runs when read).
  const { agent_found: _found, refused: _refused, ...placed } = row;
  return placed;
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
