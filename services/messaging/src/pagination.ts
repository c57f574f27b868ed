import { decodeCursor, encodeCursor, validationFailed } from "@switchboard/kit";

export const defaultPageLimit = 50;
export const maxPageLimit = 200;

/** API.md pagination: 1–200, 0 (unset) means 50. */
export function pageLimit(value: number): number {
  if (value === 0) return defaultPageLimit;
  if (!Number.isInteger(value) || value < 1 || value > maxPageLimit) {
    throw validationFailed([
      { pointer: "#/query/limit", detail: `must be an integer from 1 to ${maxPageLimit}` },
    ]);
  }
  return value;
}

/**
 * Keyset paging on ULID ids, newest first (ids sort by creation time): the cursor carries the
 * last id shown and the next page is `id < that id`. Rows inserted meanwhile sort above the
 * cursor, so no item is skipped or repeated.
 */
export interface IdPage<T> {
  items: T[];
  nextCursor: string;
  hasMore: boolean;
}

/** The id the page starts below, or undefined for the first page. */
export const cursorId = (cursor: string, binding: string): string | undefined =>
  cursor === "" ? undefined : decodeCursor(cursor, binding, ["id"])[0];

/** Splits `limit + 1` fetched rows into the page and the cursor of the next one. */
export function idPage<R extends { id: string }, T>(
  rows: R[],
  limit: number,
  binding: string,
  map: (row: R) => T,
): IdPage<T> {
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  return {
    items: page.map(map),
    nextCursor: hasMore && last ? encodeCursor(binding, [last.id]) : "",
    hasMore,
  };
}
