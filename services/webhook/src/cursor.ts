import { createHash } from "node:crypto";
import { DomainError } from "@switchboard/kit";

/**
 * Opaque keyset cursors: base64url of `[version, binding hash, ...position]` plus a checksum.
 * The binding is a canonical string of the filters (and the account) the page was produced
 * under; a cursor presented with other filters, or altered in any way, is `invalid-cursor`.
 */
const version = 1;
const checksumLength = 8;

const digest = (text: string, length: number): string =>
  createHash("sha256").update(text).digest("base64url").slice(0, length);

export function encodeCursor(binding: string, position: readonly string[]): string {
  const body = JSON.stringify([version, digest(binding, 16), ...position]);
  return `${Buffer.from(body, "utf8").toString("base64url")}.${digest(body, checksumLength)}`;
}

/** The position a cursor carries; throws `invalid-cursor` on garbage, tampering or other filters. */
export function decodeCursor(token: string, binding: string, arity: number): string[] {
  const [encoded, checksum, extra] = token.split(".");
  if (!encoded || !checksum || extra !== undefined || !/^[A-Za-z0-9_-]+$/.test(encoded)) {
    throw invalidCursor("the cursor is malformed");
  }
  const body = Buffer.from(encoded, "base64url").toString("utf8");
  if (digest(body, checksumLength) !== checksum) throw invalidCursor("the cursor is malformed");
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw invalidCursor("the cursor is malformed");
  }
  if (
    !Array.isArray(parsed) ||
    parsed[0] !== version ||
    parsed.length !== arity + 2 ||
    !parsed.slice(1).every((part) => typeof part === "string")
  ) {
    throw invalidCursor("the cursor is malformed");
  }
  if (parsed[1] !== digest(binding, 16)) {
    throw invalidCursor("the cursor was issued for different filters");
  }
  return parsed.slice(2) as string[];
}

const invalidCursor = (detail: string) => new DomainError("invalid-cursor", detail);
