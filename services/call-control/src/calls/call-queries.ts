import {
  createdOrderBinding,
  FieldErrors,
  type IdPage,
  listByCreation,
  notFound,
  pageLimit,
  type Pool,
  type Queryable,
  readCreatedOrder,
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

/**
 * Newest first by creation (then id) unless `oldest_first`, optionally within a creation window;
 * keyset-paged on (created_at, id), the cursor bound to the filters, window and order.
 */
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
  const order = readCreatedOrder(request, errors);
  errors.throwIfAny();
  const limit = pageLimit(request.limit);
  const binding = JSON.stringify([
    "calls",
    request.accountId,
    request.direction ?? null,
    request.status ?? null,
    ...createdOrderBinding(order),
  ]);
  return listByCreation<CallRow, CallRow>(
    pool,
    {
      from: "call_control.calls c",
      alias: "c",
      columns: callColumns,
      filters: { "c.account_id": request.accountId, "c.direction": direction, "c.status": status },
      order,
      cursor: request.cursor,
      binding,
      limit,
    },
    (row) => row,
  );
}
