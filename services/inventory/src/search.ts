import { encodeCursor, plannedEachTime, type Queryable, splitPage } from "@switchboard/kit";
import type { inventory } from "@switchboard/proto";
import { toPhoneNumber, type NumberRow } from "./rows.js";
import { buildSearchSql } from "./search-sql.js";
import { parseSearchRequest, searchBinding, type SearchQuery } from "./search-query.js";

/** Runs one validated search; the page is ordered by E.164 ascending. */
export async function runSearch(
  db: Queryable,
  query: SearchQuery,
): Promise<inventory.SearchNumbersResponse> {
  const sql = buildSearchSql(query);
  if (!sql) return { numbers: [], nextCursor: "", hasMore: false };
  // Planned for its filters each time: the index a search takes depends on their values.
  const result = await db.query<NumberRow>(plannedEachTime(sql.text, sql.values));
  const { page, hasMore } = splitPage(result.rows, query.limit);
  const last = page[page.length - 1];
  return {
    numbers: page.map((row) => toPhoneNumber({ ...row, status: "available" })),
    nextCursor: hasMore && last ? encodeCursor(searchBinding(query.filters), [last.e164]) : "",
    hasMore,
  };
}

/** SearchNumbers: validates the request (422 / invalid-cursor) and searches. */
export async function searchNumbers(
  db: Queryable,
  request: inventory.SearchNumbersRequest,
): Promise<inventory.SearchNumbersResponse> {
  return runSearch(db, parseSearchRequest(request));
}
