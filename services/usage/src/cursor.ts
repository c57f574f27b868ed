import { createHash } from "node:crypto";
import { DomainError } from "@switchboard/kit";

/**
 * Opaque keyset cursors: base64url of `[version, binding hash, occurred_at, id]` plus a checksum.
 * The binding is the canonical form of the account and filters the page was produced under; a
 * cursor presented with other filters, or altered, is `invalid-cursor`.
 */
const version = 1;

const digest = (text: string, length: number): string =>
  createHash("sha256").update(text).digest("base64url").slice(0, length);

export interface Position {
  /** occurred_at with microseconds, exact for the keyset comparison. */
  at: string;
  id: string;
}

export function encodeCursor(binding: string, position: Position): string {
  const body = JSON.stringify([version, digest(binding, 16), position.at, position.id]);
  return `${Buffer.from(body, "utf8").toString("base64url")}.${digest(body, 8)}`;
}

const invalidCursor = (detail: string) => new DomainError("invalid-cursor", detail);

/** The position a cursor carries; throws `invalid-cursor` on garbage, tampering or other filters. */
export function decodeCursor(token: string, binding: string): Position {
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
    parsed.length !== 4 ||
    parsed[0] !== version ||
    !parsed.slice(1).every((part) => typeof part === "string")
  ) {
    throw invalidCursor("the cursor is malformed");
  }
  if (parsed[1] !== digest(binding, 16)) {
    throw invalidCursor("the cursor was issued for different filters");
  }
  const [, , at, id] = parsed as [number, string, string, string];
  if (Number.isNaN(Date.parse(at))) throw invalidCursor("the cursor is malformed");
  return { at, id };
}
