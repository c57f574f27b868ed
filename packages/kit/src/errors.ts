/**
 * The one error taxonomy. A DomainError carries a problem `kind` from API.md; the gRPC codec
 * (grpc-errors.ts) and the gateway's problem mapper are the only places that translate it.
 */
export const problemKinds = {
  "malformed-request": { status: 400, title: "The request could not be parsed" },
  "invalid-idempotency-key": { status: 400, title: "The Idempotency-Key header is malformed" },
  "invalid-cursor": { status: 400, title: "The pagination cursor is invalid" },
  unauthenticated: { status: 401, title: "Authentication is required" },
  "invalid-token": { status: 401, title: "The access token is invalid" },
  "insufficient-scope": { status: 403, title: "The credential lacks the required permission" },
  "not-found": { status: 404, title: "The resource was not found" },
  "unsupported-version": { status: 404, title: "The API version is not supported" },
  "method-not-allowed": { status: 405, title: "The method is not allowed on this resource" },
  "request-timeout": { status: 408, title: "The request was not received in time" },
  "idempotency-mismatch": {
    status: 409,
    title: "Idempotency-Key was reused with a different request body",
  },
  "idempotency-in-progress": {
    status: 409,
    title: "A request with this Idempotency-Key is still in progress",
  },
  "number-unavailable": { status: 409, title: "The number is not available" },
  "invalid-state": { status: 409, title: "The resource is not in a state that allows this" },
  "seat-busy": { status: 409, title: "The seat is at its concurrent call limit" },
  conflict: { status: 409, title: "The request conflicts with the current state" },
  "payload-too-large": { status: 413, title: "The request body is too large" },
  "unsupported-media-type": {
    status: 415,
    title: "The request body's media type is not supported",
  },
  "headers-too-large": { status: 431, title: "The request's header fields are too large" },
  "validation-failed": { status: 422, title: "The request did not pass validation" },
  "caller-id-not-owned": { status: 422, title: "The caller id is not a number of this account" },
  "consent-required": { status: 422, title: "A granted consent is required" },
  "recipient-opted-out": { status: 422, title: "The recipient has opted out" },
  "template-signature-invalid": {
    status: 422,
    title: "The template no longer matches its signature",
  },
  "unsafe-webhook-url": { status: 422, title: "The webhook URL is not allowed" },
  "hold-limit-reached": { status: 422, title: "The account has reached its active hold limit" },
  "rate-limited": { status: 429, title: "Too many requests" },
  internal: { status: 500, title: "Internal error" },
  "service-unavailable": { status: 503, title: "A backend service is unavailable" },
  "upstream-timeout": { status: 504, title: "A backend service did not answer in time" },
} as const satisfies Record<string, { status: number; title: string }>;

export type ProblemKind = keyof typeof problemKinds;

export const isProblemKind = (value: string): value is ProblemKind =>
  Object.prototype.hasOwnProperty.call(problemKinds, value);

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

  get status(): number {
    return problemKinds[this.kind].status;
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
