import { createHash } from "node:crypto";
import { DomainError, validationFailed } from "@switchboard/kit";

/**
 * API.md pagination: `limit` 1–200 (0 = unset = 50) and opaque keyset cursors. A cursor is
 * base64url of `[version, binding hash, last id]` plus a checksum; the binding is a canonical
 * string of the listing's filters and account, so a cursor presented with other filters, or
 * altered in any way, is `invalid-cursor`. Every listing here is ordered by id descending
 * (ids are ULIDs, so newest first), which keeps pages stable while rows are inserted.
 */
export const defaultPageLimit = 50;
export const maxPageLimit = 200;
const version = 1;

const digest = (text: string, length: number): string =>
  createHash("sha256").update(text).digest("base64url").slice(0, length);

export function pageLimit(value: number): number {
  if (value === 0) return defaultPageLimit;
  if (!Number.isInteger(value) || value < 1 || value > maxPageLimit) {
    throw validationFailed([
      { pointer: "#/query/limit", detail: `must be an integer from 1 to ${maxPageLimit}` },
    ]);
  }
  return value;
}

export function encodeCursor(binding: string, lastId: string): string {
  const body = JSON.stringify([version, digest(binding, 16), lastId]);
  return `${Buffer.from(body, "utf8").toString("base64url")}.${digest(body, 8)}`;
}

const invalidCursor = (detail: string) => new DomainError("invalid-cursor", detail);

/** The last id a cursor carries, or undefined for an empty cursor (the first page). */
export function decodeCursor(token: string, binding: string): string | undefined {
  if (token === "") return undefined;
  const [encoded, checksum, extra] = token.split(".");
  if (!encoded || !checksum || extra !== undefined || !/^[A-Za-z0-9_-]+$/.test(encoded)) {
    throw invalidCursor("the cursor is malformed");
  }
  const body = Buffer.from(encoded, "base64url").toString("utf8");
  if (digest(body, 8) !== checksum) throw invalidCursor("the cursor is malformed");
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw invalidCursor("the cursor is malformed");
  }
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 3 ||
    parsed[0] !== version ||
    typeof parsed[2] !== "string"
  ) {
    throw invalidCursor("the cursor is malformed");
  }
  if (parsed[1] !== digest(binding, 16)) {
    throw invalidCursor("the cursor was issued for different filters");
  }
  return parsed[2];
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
    nextCursor: hasMore && last ? encodeCursor(binding, last.id) : "",
    hasMore,
  };
}
