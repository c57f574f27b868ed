import type { FieldError } from "@switchboard/kit";

export const defaultPageLimit = 50;
export const maxPageLimit = 200;

/** API.md pagination: 1–200, 0 (unset) means 50. */
export function pageLimit(
  value: number,
  pointer = "#/query/limit",
): { limit: number } | { error: FieldError } {
  if (value === 0) return { limit: defaultPageLimit };
  if (!Number.isInteger(value) || value < 1 || value > maxPageLimit) {
    return { error: { pointer, detail: `must be an integer from 1 to ${maxPageLimit}` } };
  }
  return { limit: value };
}

/** Splits `limit + 1` fetched rows into the page and whether more follow. */
export function splitPage<T>(rows: T[], limit: number): { page: T[]; hasMore: boolean } {
  return rows.length > limit
    ? { page: rows.slice(0, limit), hasMore: true }
    : { page: rows, hasMore: false };
}
