import { decodeCursor, encodeCursor, validationFailed } from "@switchboard/kit";

/**
 * API.md pagination: `limit` 1–200 (0 = unset = 50) and opaque keyset cursors (the kit's
 * signed cursors, carrying the last id; the binding is a canonical string of the listing's
 * filters and account). Every listing here is ordered by id descending
 * (ids are ULIDs, so newest first), which keeps pages stable while rows are inserted.
 */
export const defaultPageLimit = 50;
export const maxPageLimit = 200;

export function pageLimit(value: number): number {
  if (value === 0) return defaultPageLimit;
  if (!Number.isInteger(value) || value < 1 || value > maxPageLimit) {
    throw validationFailed([
      { pointer: "#/query/limit", detail: `must be an integer from 1 to ${maxPageLimit}` },
    ]);
  }
  return value;
}

/** The last id a cursor carries, or undefined for an empty cursor (the first page). */
export function afterId(token: string, binding: string): string | undefined {
  return token === "" ? undefined : decodeCursor(token, binding, ["id"])[0];
}

export interface Page<T> {
  items: T[];
  nextCursor: string;
  hasMore: boolean;
}

/** Splits `limit + 1` rows (ordered by id descending) into a page and the next cursor. */
export function toPage<R extends { id: string }, T>(
  rows: R[],
  limit: number,
  binding: string,
  map: (row: R) => T,
): Page<T> {
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  return {
    items: page.map(map),
    nextCursor: hasMore && last ? encodeCursor(binding, [last.id]) : "",
    hasMore,
  };
}
