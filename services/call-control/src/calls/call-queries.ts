import {
  cursorId,
  FieldErrors,
  type IdPage,
  idPage,
  notFound,
  pageLimit,
  type Pool,
  type Queryable,
  requireAccount,
  requireId,
} from "@switchboard/kit";
import { wire, type callcontrol } from "@switchboard/proto";
import { callColumns, type CallRow } from "./call-rows.js";
import { callDirections, callStatuses } from "./states.js";

/** The account's call (another account's call is not found), optionally locked for update. */
export async function findCall(
  db: Queryable,
  accountId: string,
  callId: string,
  options: { lock?: boolean } = {},
): Promise<CallRow> {
  const id = requireId(callId, "call", "the call");
  const { rows } = await db.query<CallRow>(
    `SELECT ${callColumns} FROM call_control.calls c
      WHERE c.id = $1 AND c.account_id = $2 ${options.lock ? "FOR UPDATE" : ""}`,
    [id, accountId],
  );
  if (!rows[0]) throw notFound("the call");
  return rows[0];
}

export async function getCall(pool: Pool, request: callcontrol.GetCallRequest): Promise<CallRow> {
  requireAccount(request.accountId).throwIfAny();
  return findCall(pool, request.accountId, request.callId);
}

/** Newest first (ids are ULIDs); the cursor is bound to the filters. */
export async function listCalls(
  pool: Pool,
  request: callcontrol.ListCallsRequest,
): Promise<IdPage<CallRow>> {
  const errors = requireAccount(request.accountId, new FieldErrors());
  const direction = request.direction && wire.callDirection.spell(request.direction);
  if (request.direction !== undefined && direction === undefined) {
    errors.add("#/query/direction", `must be one of ${callDirections.join(", ")}`);
  }
  const status = request.status && wire.callStatus.spell(request.status);
  if (request.status !== undefined && status === undefined) {
    errors.add("#/query/status", `must be one of ${callStatuses.join(", ")}`);
  }
  errors.throwIfAny();
  const limit = pageLimit(request.limit);
  const binding = JSON.stringify([
    "calls",
    request.accountId,
    request.direction ?? null,
    request.status ?? null,
  ]);
  const after = cursorId(request.cursor, binding);
  const { rows } = await pool.query<CallRow>(
    `SELECT ${callColumns} FROM call_control.calls c
      WHERE c.account_id = $1
        AND ($2::text IS NULL OR c.direction = $2)
        AND ($3::text IS NULL OR c.status = $3)
        AND ($4::text IS NULL OR c.id < $4)
      ORDER BY c.id DESC LIMIT $5`,
    [request.accountId, direction ?? null, status ?? null, after ?? null, limit + 1],
  );
  return idPage(rows, limit, binding, (row) => row);
}
