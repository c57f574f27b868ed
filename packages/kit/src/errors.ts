/**
 * The one error taxonomy. A DomainError carries a problem `kind` from docs/api.md; the gRPC codec
 * (grpc-errors.ts) and the gateway's problem mapper (gateway/src/http/problem.ts, the only
 * place that knows HTTP statuses) are the only places that translate it.
 */
export const problemKinds = [
  "malformed-request",
  "invalid-idempotency-key",
  "invalid-cursor",
  "unauthenticated",
  "invalid-token",
  "insufficient-scope",
  "not-found",
  "unsupported-version",
  "method-not-allowed",
  "request-timeout",
  "idempotency-mismatch",
  "idempotency-in-progress",
  "number-unavailable",
  "invalid-state",
  "seat-busy",
  "conflict",
  "payload-too-large",
  "unsupported-media-type",
  "headers-too-large",
  "validation-failed",
  "caller-id-not-owned",
  "consent-required",
  "recipient-opted-out",
  "channel-unavailable",
  "template-signature-invalid",
  "unsafe-webhook-url",
  "hold-limit-reached",
  "rate-limited",
  "internal",
  "service-unavailable",
  "upstream-timeout",
] as const;

export type ProblemKind = (typeof problemKinds)[number];

export const isProblemKind = (value: string): value is ProblemKind =>
  (problemKinds as readonly string[]).includes(value);

/** One field-level validation failure: a JSON Pointer into the body, or `#/query/<name>`. */
export interface FieldError {
  pointer: string;
  detail: string;
}

export interface DomainErrorMeta {
  /** Validation failures (kind `validation-failed`). */
  errors?: FieldError[];
  /** Seconds the client should wait (429, 503, 409 in-progress). */
  retryAfter?: number;
  /** Extra safe-to-show members of the problem body. */
  extensions?: Record<string, unknown>;
  /** Response headers the problem needs (e.g. `Allow` on 405); never part of the body. */
  headers?: Record<string, string>;
}

export class DomainError extends Error {
  override readonly name = "DomainError";
  constructor(
    readonly kind: ProblemKind,
    readonly detail: string,
    readonly meta: DomainErrorMeta = {},
    options?: { cause?: unknown },
  ) {
    super(`${kind}: ${detail}`, options);
  }
}

export const notFound = (what: string): DomainError =>
  new DomainError("not-found", `${what} was not found`);

export const validationFailed = (errors: FieldError[], detail?: string): DomainError =>
  new DomainError(
    "validation-failed",
    detail ?? errors.map((e) => `${e.pointer}: ${e.detail}`).join("; "),
    { errors },
  );
