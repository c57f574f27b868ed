import { DomainError } from "@switchboard/kit";
import type { Exchange } from "../http/pipeline.js";
import { callerOf, requestFingerprint } from "./fingerprint.js";

const token = /^[A-Za-z0-9_:.-]{1,255}$/;
const quoted = /^"([A-Za-z0-9_:.-]{1,255})"$/;

/** Methods that may carry an Idempotency-Key; safe methods ignore the header. */
export const UNSAFE_METHODS: ReadonlySet<string> = new Set(["POST", "PATCH", "DELETE"]);

/**
 * Reads `Idempotency-Key`: 1–255 of `A-Z a-z 0-9 _ : . -`, bare or as an RFC 8941 sf-string
 * (`"abc"` is the key `abc`). Absent → undefined; anything else (empty, too long, other
 * characters, several keys) → 400 invalid-idempotency-key. The key is never echoed back.
 */
export function parseIdempotencyKey(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  const value = (Array.isArray(header) ? header.join(", ") : header).trim();
  const key = token.test(value) ? value : quoted.exec(value)?.[1];
  if (key === undefined) {
    throw new DomainError(
      "invalid-idempotency-key",
      "Idempotency-Key must be 1–255 of A-Z a-z 0-9 _ : . - (optionally as a quoted string)",
    );
  }
  return key;
}

/** A request the Idempotency-Key layer applies to: an authenticated unsafe request with a key. */
export interface Keyed {
  /** `accountId \0 key`: what waiters of this replica wait on. */
  id: string;
  accountId: string;
  key: string;
  fingerprint: Buffer;
}

/**
 * The request's key and fingerprint; undefined for a public route, a safe method or no key.
 * Throws 400 invalid-idempotency-key for a malformed key.
 */
export function keyedRequest({ req, principal }: Exchange): Keyed | undefined {
  if (principal === null || !UNSAFE_METHODS.has(req.method)) return undefined;
  const key = parseIdempotencyKey(req.headers["idempotency-key"]);
  if (key === undefined) return undefined;
  const { accountId } = principal;
  const fingerprint = requestFingerprint(
    req.method,
    req.versionlessPath,
    req.body,
    callerOf(principal),
  );
  return { id: `${accountId}\u0000${key}`, accountId, key, fingerprint };
}
