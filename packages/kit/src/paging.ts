import { decodeCursor, encodeCursor } from "./cursor.js";
import { FieldErrors } from "./field-errors.js";

/**
 * Paging as docs/api.md says: `limit` 1–200 (0 = unset = 50) and opaque keyset cursors (the
 * kit's signed cursors; the binding is a canonical string of the listing's filters and account).
 */
export const defaultPageLimit = 50;
export const maxPageLimit = 200;

/**
 * The page size a request asks for. An invalid one is added to `errors` (and 0 returned) when
 * they are given, so it is reported with the request's other field errors; else it throws.
 */
export function pageLimit(value: number, errors?: FieldErrors, pointer = "#/query/limit"): number {
  if (value === 0) return defaultPageLimit;
  if (Number.isInteger(value) && value >= 1 && value <= maxPageLimit) return value;
  const collected = errors ?? new FieldErrors();
  collected.add(pointer, `must be an integer from 1 to ${maxPageLimit}`);
  if (!errors) collected.fail();
  return 0;
}

/** Splits `limit + 1` fetched rows into the page and whether more follow. */
export function splitPage<T>(rows: T[], limit: number): { page: T[]; hasMore: boolean } {
  return rows.length > limit
    ? { page: rows.slice(0, limit), hasMore: true }
    : { page: rows, hasMore: false };
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

/** The id a page starts below, or undefined for the first page (an empty cursor). */
export const cursorId = (cursor: string, binding: string): string | undefined =>
  cursor === "" ? undefined : decodeCursor(cursor, binding, ["id"])[0];

/**
 * Splits `limit + 1` rows (in the listing's order) into the page and the cursor of the next
 * one, which carries `keyOf` of the last row shown.
 */
export function keysetPage<R, T>(
  rows: R[],
  limit: number,
  binding: string,
  map: (row: R) => T,
  keyOf: (row: R) => string[],
): IdPage<T> {
  const { page, hasMore } = splitPage(rows, limit);
  const last = page[page.length - 1];
  return {
    items: page.map(map),
    nextCursor: hasMore && last ? encodeCursor(binding, keyOf(last)) : "",
    hasMore,
  };
}

/** keysetPage for rows ordered by id descending. */
export const idPage = <R extends { id: string }, T>(
  rows: R[],
  limit: number,
  binding: string,
  map: (row: R) => T,
): IdPage<T> => keysetPage(rows, limit, binding, map, (row) => [row.id]);
