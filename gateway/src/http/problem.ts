import type { Response } from "express";
import { DomainError, dependencyFailure, type ProblemKind } from "@switchboard/kit";

export const PROBLEM_MEDIA_TYPE = "application/problem+json";

/** The HTTP status and title of each problem kind: the only place HTTP statuses are chosen. */
export const httpProblems = {
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
  "channel-unavailable": {
    status: 422,
    title: "The platform's carrier cannot send on this channel",
  },
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
} as const satisfies Record<ProblemKind, { status: number; title: string }>;

export const httpStatusOf = (kind: ProblemKind): number => httpProblems[kind].status;

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  code: string;
  detail: string;
  instance: string;
  errors?: { pointer: string; detail: string }[];
  [extension: string]: unknown;
}

export const problemCode = (kind: ProblemKind): string => kind.replace(/-/g, "_").toUpperCase();

export const problemType = (errorsUrl: string, kind: ProblemKind): string => `${errorsUrl}/${kind}`;

const realm = 'Bearer realm="switchboard"';

/** Headers that a problem kind implies (RFC 6750 challenges, Retry-After). */
function problemHeaders(error: DomainError): Record<string, string> {
  const headers: Record<string, string> = { ...(error.meta.headers ?? {}) };
  if (error.kind === "unauthenticated") headers["WWW-Authenticate"] = realm;
  if (error.kind === "invalid-token")
    headers["WWW-Authenticate"] = `${realm}, error="invalid_token"`;
  if (error.kind === "insufficient-scope") {
    const scope = String(error.meta.extensions?.required_scope ?? "");
    headers["WWW-Authenticate"] = `${realm}, error="insufficient_scope", scope="${scope}"`;
  }
  if (error.meta.retryAfter !== undefined) {
    headers["Retry-After"] = String(Math.max(1, Math.ceil(error.meta.retryAfter)));
  }
  return headers;
}

/**
 * The one place that turns a failure into RFC 9457 problem+json. The gateway's own database
 * down or past its deadline is 503 or 504; anything else that is not a DomainError is masked as
 * `internal`: no message, stack or SQL ever reaches a client.
 */
export function toProblem(
  error: unknown,
  context: { requestId: string; errorsUrl: string },
): { status: number; headers: Record<string, string>; body: ProblemBody } {
  const domain =
    error instanceof DomainError
      ? error
      : (dependencyFailure(error) ?? new DomainError("internal", "internal error"));
  const { status, title } = httpProblems[domain.kind];
  const body: ProblemBody = {
    // Extensions first: the standard members below can never be overwritten by them.
    ...(domain.meta.extensions ?? {}),
    type: problemType(context.errorsUrl, domain.kind),
    title,
    status,
    code: problemCode(domain.kind),
    detail: domain.kind === "internal" ? "An internal error occurred." : domain.detail,
    instance: `urn:switchboard:request:${context.requestId}`,
    ...(domain.meta.errors ? { errors: domain.meta.errors } : {}),
  };
  return { status, headers: problemHeaders(domain), body };
}

export function sendProblem(
  res: Response,
  error: unknown,
  context: { requestId: string; errorsUrl: string },
): void {
  const problem = toProblem(error, context);
  res.status(problem.status).set(problem.headers).type(PROBLEM_MEDIA_TYPE);
  res.send(JSON.stringify(problem.body));
}
