import canonicalize from "canonicalize";
import { DomainError } from "@switchboard/kit";
import { sha256Hex } from "./templates/signature.js";

/**
 * The service's own record of Idempotency-Key (API.md): the key is stored with the resource it
 * created, unique per account, beside a fingerprint of the request. A retry with the key gets
 * the resource back; the key reused for another request is `idempotency-mismatch`. This holds
 * even if the gateway's key store is lost.
 */
export function requestFingerprint(operation: string, request: { accountId: string }): string {
  const { accountId: _accountId, ...rest } = request;
  return sha256Hex(canonicalize([operation, rest]) ?? "");
}

export function checkKeyLength(key: string | undefined): void {
  if (key !== undefined && (key.length === 0 || key.length > 255)) {
    throw new DomainError(
      "invalid-idempotency-key",
      "the Idempotency-Key must be 1–255 characters",
    );
  }
}

export function replayOrMismatch<T>(
  stored: { request_sha256: string | null },
  fingerprint: string,
  resource: T,
): T {
  if (stored.request_sha256 !== fingerprint) {
    throw new DomainError(
      "idempotency-mismatch",
      "the Idempotency-Key was already used with a different request",
    );
  }
  return resource;
}

/** Postgres unique_violation on the given index (a concurrent request with the same key won). */
export const isUniqueViolation = (error: unknown, constraint?: string): boolean =>
  typeof error === "object" &&
  error !== null &&
  (error as { code?: unknown }).code === "23505" &&
  (constraint === undefined || (error as { constraint?: unknown }).constraint === constraint);
