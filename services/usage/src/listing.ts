import {
  decodeCursor,
  isId,
  keysetPage,
  notFound,
  plannedEachTime,
  type Queryable,
} from "@switchboard/kit";
import type { usage } from "@switchboard/proto";
import { fromStored, toProtoRecord } from "./ledger-record.js";
import { cursorBinding, listFilters } from "./list-filters.js";

interface StoredRow {
  id: string;
  payload: string;
  signature: string;
  at_key: string;
}

/** occurred_at with microseconds, exact for the keyset comparison. */
const atKey = `to_char(r.occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/**
 * ListUsageEvents: the account's records, newest first, keyset on (occurred_at, id). The key of
 * a record never changes (the ledger is append-only), so a walk through the pages neither skips
 * nor repeats a record, however many are inserted meanwhile: a page continues strictly below
 * the last key served. Records inserted below that key later (late deliveries) still show up.
 */
export async function listUsageEvents(
  db: Queryable,
  request: usage.ListUsageEventsRequest,
): Promise<usage.ListUsageEventsResponse> {
  const filters = listFilters(request);
  const binding = cursorBinding(filters);
  const values: unknown[] = [filters.accountId];
  const where = ["r.account_id = $1"];
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  if (filters.kind !== undefined) where.push(`r.kind = ${param(filters.kind)}`);
  if (filters.resourceId !== undefined) where.push(`r.resource_id = ${param(filters.resourceId)}`);
  if (filters.since !== undefined)
    where.push(`r.occurred_at >= ${param(filters.since)}::timestamptz`);
  if (filters.until !== undefined)
    where.push(`r.occurred_at < ${param(filters.until)}::timestamptz`);
  if (request.cursor !== "") {
    const [at, id] = decodeCursor(request.cursor, binding, ["instant", "id"]);
    const position = { at: at!, id: id! };
    where.push(
      `(r.occurred_at, r.id) < (${param(position.at)}::timestamptz, ${param(position.id)})`,
    );
  }
  // Planned for its filters and position each time (a listing's best plan depends on them).
  const { rows } = await db.query<StoredRow>(
    plannedEachTime(
      `SELECT r.id, r.payload, r.signature, ${atKey} AS at_key
         FROM usage.records r
        WHERE ${where.join(" AND ")}
        ORDER BY r.occurred_at DESC, r.id DESC
        LIMIT ${param(filters.limit + 1)}`,
      values,
    ),
  );
  const { items, nextCursor, hasMore } = keysetPage(
    rows,
    filters.limit,
    binding,
    (row) => toProtoRecord(fromStored(row.payload, row.signature)),
    (row) => [row.at_key, row.id],
  );
  return { records: items, nextCursor, hasMore };
}

/** GetUsageEvent: one of the account's records; another account's is not found. */
export async function getUsageEvent(
  db: Queryable,
  request: usage.GetUsageEventRequest,
): Promise<usage.UsageRecord> {
  if (!isId(request.id, "use") || request.accountId === "") throw notFound("the usage record");
  const { rows } = await db.query<{ payload: string; signature: string }>(
    "SELECT payload, signature FROM usage.records WHERE id = $1 AND account_id = $2",
    [request.id, request.accountId],
  );
  const row = rows[0];
  if (!row) throw notFound("the usage record");
  return toProtoRecord(fromStored(row.payload, row.signature));
}
