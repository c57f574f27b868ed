import { status } from "@grpc/grpc-js";

/**
 * The one error taxonomy. A DomainError carries a problem `kind` from docs/api.md; `problems` is
 * the one table of what each kind is on the wire: its gRPC status code (the codec,
 * grpc-errors.ts), its HTTP status and its title (the gateway's problem mapper,
 * gateway/src/http/problem.ts). Nothing else maps a kind.
 */
export const problems = {
  "malformed-request": {
    grpc: status.INVALID_ARGUMENT,
    http: 400,
    title: "The request could not be parsed",
  },
  "invalid-idempotency-key": {
    grpc: status.INVALID_ARGUMENT,
    http: 400,
    title: "The Idempotency-Key header is malformed",
  },
  "invalid-cursor": {
    grpc: status.INVALID_ARGUMENT,
    http: 400,
    title: "The pagination cursor is invalid",
  },
  unauthenticated: { grpc: status.UNAUTHENTICATED, http: 401, title: "Authentication is required" },
  "invalid-token": {
    grpc: status.UNAUTHENTICATED,
    http: 401,
    title: "The access token is invalid",
  },
  "insufficient-scope": {
    grpc: status.PERMISSION_DENIED,
    http: 403,
    title: "The credential lacks the required permission",
  },
  "not-found": { grpc: status.NOT_FOUND, http: 404, title: "The resource was not found" },
  "unsupported-version": {
    grpc: status.NOT_FOUND,
    http: 404,
    title: "The API version is not supported",
  },
  "method-not-allowed": {
    grpc: status.INVALID_ARGUMENT,
    http: 405,
    title: "The method is not allowed on this resource",
  },
  "request-timeout": {
    grpc: status.CANCELLED,
    http: 408,
    title: "The request was not received in time",
  },
  "idempotency-mismatch": {
    grpc: status.FAILED_PRECONDITION,
    http: 409,
    title: "Idempotency-Key was reused with a different request body",
  },
  "idempotency-in-progress": {
    grpc: status.FAILED_PRECONDITION,
    http: 409,
    title: "A request with this Idempotency-Key is still in progress",
  },
  "number-unavailable": {
    grpc: status.FAILED_PRECONDITION,
    http: 409,
    title: "The number is not available",
  },
  "invalid-state": {
    grpc: status.FAILED_PRECONDITION,
    http: 409,
    title: "The resource is not in a state that allows this",
  },
  "seat-busy": {
    grpc: status.FAILED_PRECONDITION,
    http: 409,
    title: "The seat is at its concurrent call limit",
  },
  conflict: {
    grpc: status.FAILED_PRECONDITION,
    http: 409,
    title: "The request conflicts with the current state",
  },
  "payload-too-large": {
    grpc: status.RESOURCE_EXHAUSTED,
    http: 413,
    title: "The request body is too large",
  },
  "unsupported-media-type": {
    grpc: status.INVALID_ARGUMENT,
    http: 415,
    title: "The request body's media type is not supported",
  },
  "headers-too-large": {
    grpc: status.RESOURCE_EXHAUSTED,
    http: 431,
    title: "The request's header fields are too large",
  },
  "validation-failed": {
    grpc: status.INVALID_ARGUMENT,
    http: 422,
    title: "The request did not pass validation",
  },
  "caller-id-not-owned": {
    grpc: status.INVALID_ARGUMENT,
    http: 422,
    title: "The caller id is not a number of this account",
  },
  "consent-required": {
    grpc: status.INVALID_ARGUMENT,
    http: 422,
    title: "A granted consent is required",
  },
  "recipient-opted-out": {
    grpc: status.INVALID_ARGUMENT,
    http: 422,
    title: "The recipient has opted out",
  },
  "channel-unavailable": {
    grpc: status.INVALID_ARGUMENT,
    http: 422,
    title: "The platform's carrier cannot send on this channel",
  },
  "template-signature-invalid": {
    grpc: status.INVALID_ARGUMENT,
    http: 422,
    title: "The template no longer matches its signature",
  },
  "unsafe-webhook-url": {
    grpc: status.INVALID_ARGUMENT,
    http: 422,
    title: "The webhook URL is not allowed",
  },
  "hold-limit-reached": {
    grpc: status.INVALID_ARGUMENT,
    http: 422,
    title: "The account has reached its active hold limit",
  },
  "rate-limited": { grpc: status.RESOURCE_EXHAUSTED, http: 429, title: "Too many requests" },
  internal: { grpc: status.INTERNAL, http: 500, title: "Internal error" },
  "service-unavailable": {
    grpc: status.UNAVAILABLE,
    http: 503,
    title: "A backend service is unavailable",
  },
  "upstream-timeout": {
    grpc: status.DEADLINE_EXCEEDED,
    http: 504,
    title: "A backend service did not answer in time",
  },
} as const satisfies Record<string, { grpc: status; http: number; title: string }>;

export type ProblemKind = keyof typeof problems;

/** Every problem kind, in the table's order. */
export const problemKinds = Object.keys(problems) as ProblemKind[];

export const isProblemKind = (value: string): value is ProblemKind =>
  Object.hasOwn(problems, value);

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
