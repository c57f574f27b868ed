import type { Response } from "express";
import { DomainError, dependencyFailure, problems, type ProblemKind } from "@switchboard/kit";

export const PROBLEM_MEDIA_TYPE = "application/problem+json";

/** The HTTP status and title of each problem kind (kit's one table of kinds). */
export const httpProblem = (kind: ProblemKind): { status: number; title: string } => ({
  status: problems[kind].http,
  title: problems[kind].title,
});

export const httpStatusOf = (kind: ProblemKind): number => problems[kind].http;

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
  const { status, title } = httpProblem(domain.kind);
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
