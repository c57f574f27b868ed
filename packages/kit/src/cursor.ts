import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { DomainError } from "./errors.js";
import { internalKey } from "./platform-secret.js";

/**
 * Opaque keyset cursors, one scheme for every listing: base64url of `[version, binding digest,
 * ...position]`, then `.` and an HMAC-SHA256 tag under a key only the platform holds, so a
 * client can neither forge a position nor alter one. The binding is a canonical string of the
 * account and filters the page was produced under: a cursor presented with others is refused.
 * Each part of the position is checked against its kind before it reaches SQL.
 */
const version = 2;
const tagBytes = 16;

/** What one part of a position may be; anything else is `invalid-cursor`. */
export const cursorPart = {
  /** A resource id (`<prefix>_<ULID>`). */
  id: (value: string) => /^[a-z]+_[0-9a-hjkmnp-tv-z]{26}$/.test(value),
  /** A UTC instant with microseconds, as the listings write it (`2026-11-24T20:01:02.123456Z`). */
  instant: (value: string) => {
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(value)) return false;
    const time = Date.parse(value);
    return !Number.isNaN(time) && new Date(time).toISOString().slice(0, 19) === value.slice(0, 19);
  },
  /** An E.164 number. */
  e164: (value: string) => /^\+[1-9]\d{1,14}$/.test(value),
} as const;

export type CursorPart = keyof typeof cursorPart;

let key: Buffer | undefined;
const tag = (body: string) =>
  createHmac("sha256", (key ??= internalKey("cursor")))
    .update(body)
    .digest()
    .subarray(0, tagBytes);

const bindingDigest = (binding: string) =>
  createHash("sha256").update(binding).digest("base64url").slice(0, 16);

const invalidCursor = (detail: string) => new DomainError("invalid-cursor", detail);

export function encodeCursor(binding: string, position: readonly string[]): string {
  const body = JSON.stringify([version, bindingDigest(binding), ...position]);
  return `${Buffer.from(body, "utf8").toString("base64url")}.${tag(body).toString("base64url")}`;
}

/**
 * The position a cursor carries, each part of the kind `parts` names; `invalid-cursor` on
 * garbage, a forged or altered cursor, a cursor of other filters or a position out of shape.
 */
export function decodeCursor(
  token: string,
  binding: string,
  parts: readonly CursorPart[],
): string[] {
  const [encoded, presented, extra] = token.split(".");
  const base64url = /^[A-Za-z0-9_-]+$/;
  if (
    !encoded ||
    !presented ||
    extra !== undefined ||
    !base64url.test(encoded) ||
    !base64url.test(presented)
  ) {
    throw invalidCursor("the cursor is malformed");
  }
  const body = Buffer.from(encoded, "base64url").toString("utf8");
  const expected = tag(body);
  const given = Buffer.from(presented, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw invalidCursor("the cursor is malformed");
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw invalidCursor("the cursor is malformed");
  }
  if (!Array.isArray(parsed) || parsed[0] !== version || parsed.length !== parts.length + 2) {
    throw invalidCursor("the cursor is malformed");
  }
  if (parsed[1] !== bindingDigest(binding)) {
    throw invalidCursor("the cursor was issued for different filters");
  }
  const position = parsed.slice(2) as unknown[];
  position.forEach((value, index) => {
    if (typeof value !== "string" || !cursorPart[parts[index]!](value)) {
      throw invalidCursor("the cursor is malformed");
    }
  });
  return position as string[];
}
