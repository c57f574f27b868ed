import {
  checkIdempotencyKey,
  checkIntRange,
  cursorId,
  DomainError,
  FieldErrors,
  type IdPage,
  idPage,
  newId,
  notFound,
  pageLimit,
  plannedEachTime,
  type Pool,
  type Queryable,
  requireAccount,
  requireId,
  withTransaction,
} from "@switchboard/kit";
import { wire, type callcontrol } from "@switchboard/proto";
import { issueSipCredentials } from "../sip/registrar/credentials.js";
import { liveContactSql } from "../sip/registrar/registrations.js";
import { checkName } from "../validation.js";
import { isStillReferenced, usedByRoute } from "./pg-errors.js";
import { createOnce, keyColumns, keyedCreate, madeByKey, onKeyTaken } from "./resource-keys.js";

export interface SeatRow {
  id: string;
  account_id: string;
  name: string;
  max_concurrent_calls: number;
  status: wire.SeatStatusValue;
  active_calls: number;
  created_at: Date;
  updated_at: Date;
  /** The contact URI of the seat's latest live SIP registration. */
  sip_contact: string | null;
}

const plainColumns = `id, account_id, name, max_concurrent_calls, status, active_calls, created_at, updated_at`;
/** A seat's columns read through the alias `s`, with its registration. */
const columns = `s.id, s.account_id, s.name, s.max_concurrent_calls, s.status, s.active_calls,
  s.created_at, s.updated_at, ${liveContactSql} AS sip_contact`;
export const maxSeatCalls = 10_000;

/** A seat as the API shows it; `sipDomain` is SIP_DOMAIN (its username is its id). */
export const toSeat = (row: SeatRow, sipDomain: string): callcontrol.Seat => ({
  id: row.id,
  name: row.name,
  maxConcurrentCalls: row.max_concurrent_calls,
  status: wire.seatStatus.of(row.status),
  activeCalls: row.active_calls,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
  sip: {
    username: row.id,
    domain: sipDomain,
    registered: row.sip_contact !== null,
    contact: row.sip_contact ?? undefined,
  },
});

/** The account's seat, or undefined (ids of other accounts are simply not found). */
export async function findSeat(
  db: Queryable,
  accountId: string,
  seatId: string,
): Promise<SeatRow | undefined> {
  const { rows } = await db.query<SeatRow>(
    `SELECT ${columns} FROM call_control.seats s WHERE s.id = $1 AND s.account_id = $2`,
    [seatId, accountId],
  );
  return rows[0];
}

/** Checks the fields a request may set; returns its status as the rows spell it. */
function checkFields(
  errors: FieldErrors,
  fields: {
    name?: string | undefined;
    maxConcurrentCalls?: number | undefined;
    status?: callcontrol.SeatStatus | undefined;
  },
): wire.SeatStatusValue | undefined {
  if (fields.name !== undefined) checkName(errors, "#/name", fields.name);
  checkIntRange(errors, "#/max_concurrent_calls", fields.maxConcurrentCalls, 1, maxSeatCalls);
  const status = fields.status && wire.seatStatus.spell(fields.status);
  if (fields.status !== undefined && status === undefined) {
    errors.add("#/status", "must be active or disabled");
  }
  return status;
}

/**
 * CreateSeat. Under an Idempotency-Key the same request retried gets the seat it made
 * (resource-keys.ts) with a new SIP password: the first is stored only as a digest, and the
 * gateway asks again only when its client never got the first answer (a kept answer is replayed
 * by the gateway itself), so no phone holds the password being replaced.
 */
export async function createSeat(
  pool: Pool,
  request: callcontrol.CreateSeatRequest,
  sipRealm: string,
  idempotencyKey?: string,
): Promise<{ seat: SeatRow; sipPassword: string }> {
  const errors = requireAccount(request.accountId);
  checkName(errors, "#/name", request.name);
  const status = checkFields(errors, request);
  errors.throwIfAny();
  checkIdempotencyKey(idempotencyKey);
  const keyed = keyedCreate("create-seat", request, idempotencyKey);
  return withTransaction(pool, async (client) => {
    const insert = async () => {
      const { rows } = await client.query<SeatRow>(
        `INSERT INTO call_control.seats AS s
           (id, account_id, name, max_concurrent_calls, status, idempotency_key, request_fingerprint)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ${onKeyTaken}
         RETURNING ${plainColumns}, NULL::text AS sip_contact`,
        [
          newId("seat"),
          request.accountId,
          request.name,
          request.maxConcurrentCalls ?? 1,
          status ?? "active",
          ...keyColumns(keyed),
        ],
      );
      return rows[0];
    };
    const made = await createOnce(client, "seats", request.accountId, keyed.key, insert, () =>
      madeByKey(client, "seats", request.accountId, keyed),
    );
    const seatId = made.replayed ? made.row : made.row.id;
    const sipPassword = await issueSipCredentials(client, seatId, sipRealm);
    // A replayed seat is read once its registrations went with its old password.
    const seat = made.replayed ? await findSeat(client, request.accountId, seatId) : made.row;
    return { seat: seat!, sipPassword };
  });
}

/**
 * Gives the seat a new SIP password (returned, shown once): the old one stops working and the
 * seat's registrations are removed. A seat created before SIP credentials existed gets its
 * first password here.
 */
export async function rotateSeatSipCredentials(
  pool: Pool,
  request: callcontrol.RotateSeatSipCredentialsRequest,
  sipRealm: string,
): Promise<{ seat: SeatRow; sipPassword: string }> {
  requireAccount(request.accountId).throwIfAny();
  const seatId = requireId(request.seatId, "seat", "the seat");
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ id: string }>(
      `SELECT id FROM call_control.seats WHERE id = $1 AND account_id = $2 FOR UPDATE`,
      [seatId, request.accountId],
    );
    if (!rows[0]) throw notFound("the seat");
    const sipPassword = await issueSipCredentials(client, seatId, sipRealm);
    const seat = await findSeat(client, request.accountId, seatId);
    return { seat: seat!, sipPassword };
  });
}

export async function getSeat(pool: Pool, request: callcontrol.GetSeatRequest): Promise<SeatRow> {
  requireAccount(request.accountId).throwIfAny();
  const seat = await findSeat(
    pool,
    request.accountId,
    requireId(request.seatId, "seat", "the seat"),
  );
  if (!seat) throw notFound("the seat");
  return seat;
}

export async function listSeats(
  pool: Pool,
  request: callcontrol.ListSeatsRequest,
): Promise<IdPage<SeatRow>> {
  requireAccount(request.accountId).throwIfAny();
  const limit = pageLimit(request.limit);
  const binding = `seats:${request.accountId}`;
  const after = cursorId(request.cursor, binding);
  // Planned for its page each time: a generic plan would filter `id < $2` instead of starting there.
  const { rows } = await pool.query<SeatRow>(
    plannedEachTime(
      `SELECT ${columns} FROM call_control.seats s
        WHERE s.account_id = $1 AND ($2::text IS NULL OR s.id < $2)
        ORDER BY s.id DESC LIMIT $3`,
      [request.accountId, after ?? null, limit + 1],
    ),
  );
  return idPage(rows, limit, binding, (row) => row);
}

export async function updateSeat(
  pool: Pool,
  request: callcontrol.UpdateSeatRequest,
): Promise<SeatRow> {
  const errors = requireAccount(request.accountId);
  const status = checkFields(errors, request);
  errors.throwIfAny();
  const seatId = requireId(request.seatId, "seat", "the seat");
  const { rows } = await pool.query<SeatRow>(
    `UPDATE call_control.seats s
        SET name = COALESCE($3, name),
            max_concurrent_calls = COALESCE($4, max_concurrent_calls),
            status = COALESCE($5, status),
            updated_at = now()
      WHERE s.id = $1 AND s.account_id = $2
     RETURNING ${columns}`,
    [
      seatId,
      request.accountId,
      request.name ?? null,
      request.maxConcurrentCalls ?? null,
      status ?? null,
    ],
  );
  if (!rows[0]) throw notFound("the seat");
  return rows[0];
}

/** Refused while a route uses the seat or a call counts against it. */
export async function deleteSeat(
  pool: Pool,
  request: callcontrol.DeleteSeatRequest,
): Promise<void> {
  requireAccount(request.accountId).throwIfAny();
  const seatId = requireId(request.seatId, "seat", "the seat");
  try {
    const { rows } = await pool.query<{ active_calls: number; deleted: boolean }>(
      `WITH target AS (
         SELECT id, active_calls FROM call_control.seats
          WHERE id = $1 AND account_id = $2 FOR UPDATE
       ), removed AS (
         DELETE FROM call_control.seats s USING target
          WHERE s.id = target.id AND target.active_calls = 0
         RETURNING s.id
       )
       SELECT target.active_calls, EXISTS (SELECT 1 FROM removed) AS deleted FROM target`,
      [seatId, request.accountId],
    );
    const row = rows[0];
    if (!row) throw notFound("the seat");
    if (!row.deleted) {
      throw new DomainError(
        "conflict",
        `the seat has ${row.active_calls} live calls; end them first`,
      );
    }
  } catch (error) {
    if (isStillReferenced(error)) throw await usedByRoute(pool, "seat_id", seatId, "the seat");
    throw error;
  }
}
