import { createHash } from "node:crypto";
import {
  checkIdempotencyKey,
  DomainError,
  e164Pattern,
  isId,
  newId,
  notFound,
  type Pool,
  type PoolClient,
  requireAccount,
  withTransaction,
  runOnce,
} from "@switchboard/kit";
import { inventory } from "@switchboard/proto";
import { keyed } from "./keyed-operations.js";
import { writeEvent } from "./outbox.js";
import {
  holdColumns,
  numberColumns,
  toHold,
  toPhoneNumber,
  type HoldRow,
  type NumberRow,
} from "./rows.js";

export const defaultHoldLimit = 50;
export const defaultHoldTtlSeconds = 600;

/** Advisory-lock namespace of per-account hold creation (the second key is the account's hash). */
const holdLockNamespace = 0x1a7e_0001;
const accountLockKey = (accountId: string): number =>
  createHash("sha256").update(accountId).digest().readInt32BE(0);

/**
 * CreateHold. One conditional UPDATE claims the number (not assigned, no unexpired hold), so of
 * any number of concurrent holds on it exactly one succeeds. Per account, creation is serialised
 * by a transaction-scoped advisory lock, which makes the active-hold cap and the idempotency key
 * race-safe.
 */
export async function createHold(
  pool: Pool,
  request: inventory.CreateHoldRequest,
  options: { holdLimit: number; idempotencyKey?: string | undefined },
): Promise<inventory.Hold> {
  const errors = requireAccount(request.accountId);
  if (!e164Pattern.test(request.number)) {
    errors.add("#/number", "must be an E.164 number such as +14155550123");
  }
  const ttl = request.ttlSeconds ?? defaultHoldTtlSeconds;
  if (!Number.isInteger(ttl) || ttl < 60 || ttl > 1800) {
    errors.add("#/ttl_seconds", "must be an integer from 60 to 1800");
  }
  errors.throwIfAny();
  const key = options.idempotencyKey;
  checkIdempotencyKey(key);

  return withTransaction(pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock($1::int, $2::int)", [
      holdLockNamespace,
      accountLockKey(request.accountId),
    ]);
    if (key !== undefined) {
      const previous = await client.query<HoldRow>(
        `SELECT ${holdColumns} FROM inventory.holds h
          WHERE h.account_id = $1 AND h.idempotency_key = $2`,
        [request.accountId, key],
      );
      const hold = previous.rows[0];
      if (hold && hold.e164 !== request.number) {
        throw new DomainError(
          "idempotency-mismatch",
          "the Idempotency-Key was already used to hold another number",
        );
      }
      if (hold) return toHold(hold);
    }
    const active = await client.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM inventory.holds
        WHERE account_id = $1 AND status = 'active' AND expires_at > now()`,
      [request.accountId],
    );
    if ((active.rows[0]?.count ?? 0) >= options.holdLimit) {
      throw new DomainError(
        "hold-limit-reached",
        `the account already has ${options.holdLimit} active holds`,
        { extensions: { limit: options.holdLimit } },
      );
    }
    const holdId = newId("hld");
    const claimed = await client.query<{ id: string; event_sequence: number; held_until: Date }>(
      `UPDATE inventory.numbers
          SET hold_id = $1, held_by = $2, held_until = now() + make_interval(secs => $3),
              event_sequence = event_sequence + 1
        WHERE e164 = $4 AND assigned_account IS NULL
          AND (held_until IS NULL OR held_until <= now())
       RETURNING id, event_sequence, held_until`,
      [holdId, request.accountId, ttl, request.number],
    );
    const number = claimed.rows[0];
    if (!number) throw await unavailableOrUnknown(client, request.number);
    const inserted = await client.query<HoldRow>(
      `INSERT INTO inventory.holds AS h
         (id, account_id, number_id, e164, status, expires_at, idempotency_key)
       VALUES ($1, $2, $3, $4, 'active', $5, $6)
       RETURNING ${holdColumns}`,
      [holdId, request.accountId, number.id, request.number, number.held_until, key ?? null],
    );
    const hold = inserted.rows[0]!;
    await writeEvent(client, {
      type: "number.held",
      accountId: request.accountId,
      resourceId: number.id,
      sequence: number.event_sequence,
      data: {
        number_id: number.id,
        number: request.number,
        hold_id: holdId,
        expires_at: hold.expires_at.toISOString(),
      },
    });
    return toHold(hold);
  });
}

async function unavailableOrUnknown(client: PoolClient, e164: string): Promise<DomainError> {
  const known = await client.query("SELECT 1 FROM inventory.numbers WHERE e164 = $1", [e164]);
  return known.rowCount === 0
    ? notFound(`the number ${e164}`)
    : new DomainError("number-unavailable", `the number ${e164} is held or assigned`);
}

export async function getHold(
  pool: Pool,
  request: inventory.GetHoldRequest,
): Promise<inventory.Hold> {
  requireAccount(request.accountId).throwIfAny();
  if (!isId(request.holdId, "hld")) throw notFound("the hold");
  const result = await pool.query<HoldRow>(
    `SELECT ${holdColumns} FROM inventory.holds h WHERE h.id = $1 AND h.account_id = $2`,
    [request.holdId, request.accountId],
  );
  if (!result.rows[0]) throw notFound("the hold");
  return toHold(result.rows[0]);
}

/** Locks the account's hold and requires it to be active and unexpired. */
async function lockActiveHold(
  client: PoolClient,
  accountId: string,
  holdId: string,
): Promise<HoldRow> {
  if (!isId(holdId, "hld")) throw notFound("the hold");
  const result = await client.query<HoldRow>(
    `SELECT ${holdColumns} FROM inventory.holds h
      WHERE h.id = $1 AND h.account_id = $2 FOR UPDATE`,
    [holdId, accountId],
  );
  const hold = result.rows[0];
  if (!hold) throw notFound("the hold");
  if (hold.status !== "active") {
    throw new DomainError("invalid-state", `the hold is ${hold.status}`, {
      extensions: { hold_status: hold.status },
    });
  }
  return hold;
}

const heldNumberLost = () =>
  new DomainError("invalid-state", "the hold no longer holds its number");

/** ReleaseHold; under an Idempotency-Key its retry gets the released hold (kit runOnce). */
export async function releaseHold(
  pool: Pool,
  request: inventory.ReleaseHoldRequest,
  idempotencyKey?: string,
): Promise<inventory.Hold> {
  requireAccount(request.accountId).throwIfAny();
  const once = keyed("release-hold", request, idempotencyKey, inventory.Hold);
  return withTransaction(pool, (client) =>
    runOnce(client, once, async () => {
      const hold = await lockActiveHold(client, request.accountId, request.holdId);
      const freed = await client.query<{ event_sequence: number }>(
        `UPDATE inventory.numbers
          SET hold_id = NULL, held_by = NULL, held_until = NULL,
              event_sequence = event_sequence + 1
        WHERE id = $1 AND hold_id = $2
       RETURNING event_sequence`,
        [hold.number_id, hold.id],
      );
      if (!freed.rows[0]) throw heldNumberLost();
      const updated = await client.query<HoldRow>(
        `UPDATE inventory.holds h SET status = 'released', released_at = now()
        WHERE h.id = $1 RETURNING ${holdColumns}`,
        [hold.id],
      );
      await writeEvent(client, {
        type: "number.released",
        accountId: request.accountId,
        resourceId: hold.number_id,
        sequence: freed.rows[0].event_sequence,
        data: {
          number_id: hold.number_id,
          number: hold.e164,
          hold_id: hold.id,
          reason: "hold_released",
        },
      });
      return toHold(updated.rows[0]!);
    }),
  );
}

/** AssignHold; under an Idempotency-Key its retry gets the same answer (kit runOnce). */
export async function assignHold(
  pool: Pool,
  request: inventory.AssignHoldRequest,
  idempotencyKey?: string,
): Promise<inventory.AssignHoldResponse> {
  const errors = requireAccount(request.accountId);
  if (request.seatId !== undefined && !isId(request.seatId, "seat")) {
    errors.add("#/seat_id", "must be a seat id (seat_…)");
  }
  errors.throwIfAny();
  const once = keyed("assign-hold", request, idempotencyKey, inventory.AssignHoldResponse);
  return withTransaction(pool, (client) =>
    runOnce(client, once, async () => {
      const hold = await lockActiveHold(client, request.accountId, request.holdId);
      const assigned = await client.query<NumberRow & { event_sequence: number }>(
        `UPDATE inventory.numbers n
          SET assigned_account = $3, seat_id = $4, assigned_at = now(),
              hold_id = NULL, held_by = NULL, held_until = NULL,
              event_sequence = n.event_sequence + 1
        WHERE n.id = $1 AND n.hold_id = $2
       RETURNING ${numberColumns}, n.event_sequence`,
        [hold.number_id, hold.id, request.accountId, request.seatId ?? null],
      );
      const number = assigned.rows[0];
      if (!number) throw heldNumberLost();
      const updated = await client.query<HoldRow>(
        `UPDATE inventory.holds h SET status = 'converted', converted_at = now()
        WHERE h.id = $1 RETURNING ${holdColumns}`,
        [hold.id],
      );
      await writeEvent(client, {
        type: "number.assigned",
        accountId: request.accountId,
        resourceId: number.id,
        sequence: number.event_sequence,
        data: {
          number_id: number.id,
          number: number.e164,
          hold_id: hold.id,
          seat_id: request.seatId ?? null,
        },
      });
      return { hold: toHold(updated.rows[0]!), number: toPhoneNumber(number) };
    }),
  );
}
