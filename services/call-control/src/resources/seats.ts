import {
  checkIntRange,
  cursorId,
  DomainError,
  FieldErrors,
  type IdPage,
  idPage,
  newId,
  notFound,
  pageLimit,
  type Pool,
  type Queryable,
  requireAccount,
  requireId,
} from "@switchboard/kit";
import { wire, type callcontrol } from "@switchboard/proto";
import { checkName } from "../validation.js";
import { isStillReferenced, usedByRoute } from "./pg-errors.js";

export interface SeatRow {
  id: string;
  account_id: string;
  name: string;
  max_concurrent_calls: number;
  status: wire.SeatStatusValue;
  active_calls: number;
  created_at: Date;
  updated_at: Date;
}

const columns = `id, account_id, name, max_concurrent_calls, status, active_calls, created_at, updated_at`;
export const maxSeatCalls = 10_000;

export const toSeat = (row: SeatRow): callcontrol.Seat => ({
  id: row.id,
  name: row.name,
  maxConcurrentCalls: row.max_concurrent_calls,
  status: wire.seatStatus.of(row.status),
  activeCalls: row.active_calls,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
});

/** The account's seat, or undefined (ids of other accounts are simply not found). */
export async function findSeat(
  db: Queryable,
  accountId: string,
  seatId: string,
): Promise<SeatRow | undefined> {
  const { rows } = await db.query<SeatRow>(
    `SELECT ${columns} FROM call_control.seats WHERE id = $1 AND account_id = $2`,
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

export async function createSeat(
  pool: Pool,
  request: callcontrol.CreateSeatRequest,
): Promise<SeatRow> {
  const errors = requireAccount(request.accountId);
  checkName(errors, "#/name", request.name);
  const status = checkFields(errors, request);
  errors.throwIfAny();
  const { rows } = await pool.query<SeatRow>(
    `INSERT INTO call_control.seats (id, account_id, name, max_concurrent_calls, status)
     VALUES ($1, $2, $3, $4, $5) RETURNING ${columns}`,
    [
      newId("seat"),
      request.accountId,
      request.name,
      request.maxConcurrentCalls ?? 1,
      status ?? "active",
    ],
  );
  return rows[0]!;
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
  const { rows } = await pool.query<SeatRow>(
    `SELECT ${columns} FROM call_control.seats
      WHERE account_id = $1 AND ($2::text IS NULL OR id < $2)
      ORDER BY id DESC LIMIT $3`,
    [request.accountId, after ?? null, limit + 1],
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
    `UPDATE call_control.seats
        SET name = COALESCE($3, name),
            max_concurrent_calls = COALESCE($4, max_concurrent_calls),
            status = COALESCE($5, status),
            updated_at = now()
      WHERE id = $1 AND account_id = $2
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
