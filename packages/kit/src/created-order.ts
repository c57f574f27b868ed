import { plannedEachTime } from "./auto-prepare.js";
import { decodeCursor } from "./cursor.js";
import type { Queryable } from "./db.js";
import type { FieldErrors } from "./field-errors.js";
import { keysetPage, type IdPage } from "./paging.js";

/**
 * The creation-time window and order of a listing (docs/api.md "Pagination": `created_after`,
 * `created_before`, `sort`): rows ordered by (created_at, id), newest first unless asked
 * oldest first, keyset-paged on that pair so a walk in either direction neither skips nor
 * repeats a row.
 */
export interface CreatedOrder {
  /** RFC 3339, exclusive lower bound, as given (PostgreSQL keeps its microseconds). */
  after: string | undefined;
  /** RFC 3339, exclusive upper bound, as given. */
  before: string | undefined;
  oldestFirst: boolean;
}

export interface CreatedOrderRequest {
  createdAfter?: string | undefined;
  createdBefore?: string | undefined;
  oldestFirst?: boolean | undefined;
}

/** RFC 3339 date-time (section 5.6), with an offset or Z, fractional seconds optional. */
const rfc3339 =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d{1,9})?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$/;

const instantOf = (value: string): number | undefined =>
  value.length <= 64 && rfc3339.test(value) ? Date.parse(value.toUpperCase()) : undefined;

/** The window and order a request asks for; a malformed or empty window is added to `errors`. */
export function readCreatedOrder(request: CreatedOrderRequest, errors: FieldErrors): CreatedOrder {
  const bound = (value: string | undefined, name: string) => {
    if (value === undefined) return { value: undefined, at: undefined };
    const at = instantOf(value);
    if (at === undefined || Number.isNaN(at)) {
      errors.add(`#/query/${name}`, "must be an RFC 3339 date-time such as 2026-11-21T00:00:00Z");
      return { value: undefined, at: undefined };
    }
    return { value: value.toUpperCase(), at };
  };
  const after = bound(request.createdAfter, "created_after");
  const before = bound(request.createdBefore, "created_before");
  if (after.at !== undefined && before.at !== undefined && after.at >= before.at) {
    errors.add("#/query/created_before", "must be later than created_after");
  }
  return { after: after.value, before: before.value, oldestFirst: request.oldestFirst ?? false };
}

/** The parts of a cursor binding that the window and order add (a cursor is bound to them). */
export const createdOrderBinding = (order: CreatedOrder): string[] => [
  order.after ?? "",
  order.before ?? "",
  order.oldestFirst ? "asc" : "desc",
];

/** `created_at` of `alias` with microseconds, exact for the keyset comparison (UTC). */
const createdKeyColumn = (alias: string) =>
  `to_char(${alias}.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

/** One listing by creation: where its rows come from and what narrows them. */
export interface CreatedListing {
  /** `schema.table alias`, e.g. `call_control.calls c`. */
  from: string;
  alias: string;
  /** The selected columns (each qualified by the alias). */
  columns: string;
  /** Column (qualified) → value it must equal; undefined values do not filter. */
  filters: Record<string, unknown>;
  order: CreatedOrder;
  cursor: string;
  /** The cursor's binding: the account, filters, window and order, canonical. */
  binding: string;
  limit: number;
}

/**
 * A page of a listing by creation: the filters, the window, the cursor's position (strictly
 * past the last row served, in the order asked) and `limit + 1` rows in (created_at, id) order;
 * the next cursor carries the last row's exact created_at and id.
 */
export async function listByCreation<R extends { id: string }, T>(
  db: Queryable,
  listing: CreatedListing,
  map: (row: R) => T,
): Promise<IdPage<T>> {
  const { alias, order } = listing;
  const values: unknown[] = [];
  const param = (value: unknown) => `$${values.push(value)}`;
  const where = Object.entries(listing.filters)
    .filter(([, value]) => value !== undefined)
    .map(([column, value]) => `${column} = ${param(value)}`);
  if (order.after !== undefined) {
    where.push(`${alias}.created_at > ${param(order.after)}::timestamptz`);
  }
  if (order.before !== undefined) {
    where.push(`${alias}.created_at < ${param(order.before)}::timestamptz`);
  }
  if (listing.cursor !== "") {
    const [at, id] = decodeCursor(listing.cursor, listing.binding, ["instant", "id"]);
    const past = order.oldestFirst ? ">" : "<";
    where.push(
      `(${alias}.created_at, ${alias}.id) ${past} (${param(at)}::timestamptz, ${param(id)})`,
    );
  }
  const direction = order.oldestFirst ? "ASC" : "DESC";
  // Planned for its filters and position each time (a listing's best plan depends on them).
  const { rows } = await db.query<R & { created_key: string }>(
    plannedEachTime(
      `SELECT ${listing.columns}, ${createdKeyColumn(alias)} AS created_key FROM ${listing.from}
        WHERE ${where.length > 0 ? where.join(" AND ") : "true"}
        ORDER BY ${alias}.created_at ${direction}, ${alias}.id ${direction}
        LIMIT ${param(listing.limit + 1)}`,
      values,
    ),
  );
  return keysetPage(rows, listing.limit, listing.binding, map, (row) => [row.created_key, row.id]);
}
