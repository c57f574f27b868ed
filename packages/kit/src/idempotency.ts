import { createHash } from "node:crypto";
import canonicalize from "canonicalize";
import type { Queryable } from "./db.js";
import { DomainError } from "./errors.js";

/**
 * A service's own record of Idempotency-Key (docs/api.md): the key is stored with the resource
 * it created, unique per account, beside the request's fingerprint (column
 * `request_fingerprint`). A retry with the key gets the resource back; the key reused for
 * another request is `idempotency-mismatch`. This holds even if the gateway's key store is lost.
 */
export const maxIdempotencyKeyLength = 255;

/** The one answer to a key no request may carry: `invalid-idempotency-key`. */
export function checkIdempotencyKey(key: string | undefined): void {
  if (key !== undefined && (key.length === 0 || key.length > maxIdempotencyKeyLength)) {
    throw new DomainError(
      "invalid-idempotency-key",
      `the Idempotency-Key must be 1–${maxIdempotencyKeyLength} characters`,
    );
  }
}

/** SHA-256 (hex) of the canonical JSON of an operation and its request, the account left out. */
export function requestFingerprint(operation: string, request: object): string {
  const { accountId: _accountId, ...rest } = request as { accountId?: unknown };
  return createHash("sha256")
    .update(canonicalize([operation, rest]) ?? "")
    .digest("hex");
}

export interface Fingerprinted {
  request_fingerprint: string | null;
}

/** The resource a key created, when the request is the same one; else idempotency-mismatch. */
export function replayOrMismatch<T>(stored: Fingerprinted, fingerprint: string, resource: T): T {
  if (stored.request_fingerprint !== fingerprint) {
    throw new DomainError(
      "idempotency-mismatch",
      "the Idempotency-Key was already used with a different request",
    );
  }
  return resource;
}

/**
 * Inside a transaction: the resource the key already created (replayed, or mismatch), or
 * undefined when the key is new and the caller may insert. A transaction-scoped lock on
 * (scope, account, key) comes first, so a concurrent request with the same key waits for this
 * transaction and then finds what it inserted.
 */
export async function replayByKey<Row extends Fingerprinted, T>(
  client: Queryable,
  options: {
    scope: string;
    accountId: string;
    key: string | undefined;
    fingerprint: string;
    find: () => Promise<Row | undefined>;
    toResource: (row: Row) => T;
  },
): Promise<T | undefined> {
  if (options.key === undefined) return undefined;
  await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [
    `switchboard:${options.scope}:${options.accountId}:${options.key}`,
  ]);
  const row = await options.find();
  return row ? replayOrMismatch(row, options.fingerprint, options.toResource(row)) : undefined;
}

/** PostgreSQL unique_violation, on the given constraint when one is named. */
export const isUniqueViolation = (error: unknown, constraint?: string): boolean =>
  typeof error === "object" &&
  error !== null &&
  (error as { code?: unknown }).code === "23505" &&
  (constraint === undefined || (error as { constraint?: unknown }).constraint === constraint);
