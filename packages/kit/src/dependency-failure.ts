import { DomainError } from "./errors.js";

/**
 * docs/api.md (503 `service-unavailable`): a dependency that is down, unreachable, restarting or
 * out of connections is the platform's condition, not a bug: it answers 503 with Retry-After,
 * never 500. This is the one place that recognises such a failure of PostgreSQL (or a socket).
 */

/** SQLSTATEs of a server that cannot serve now (class 08, shutdown, too many connections). */
const unavailableStates = new Set(["57P01", "57P02", "57P03", "53300", "53400", "58000"]);

/** Socket-level failures of a connection to a dependency. */
const socketCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/** What node-postgres says when a connection is lost, cannot be had, or a statement's deadline ran out. */
const unavailableMessages = [
  /^Connection terminated/,
  /timeout exceeded when trying to connect/,
  /^Query read timeout$/,
  /Client has encountered a connection error and is not queryable/,
  /^Client was closed and is not queryable$/,
  /^Cannot use a pool after calling end on the pool$/,
];

/** SQLSTATE 57014: a statement ran past its `statement_timeout` (or was cancelled). */
const QUERY_CANCELED = "57014";

/** True when `error` says the database (or the socket to it) cannot serve now. */
export function isDependencyUnavailable(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === "string" && (code.startsWith("08") || unavailableStates.has(code))) {
    return true;
  }
  if (typeof code === "string" && socketCodes.has(code)) return true;
  if (typeof message === "string" && unavailableMessages.some((p) => p.test(message))) return true;
  const cause = (error as { cause?: unknown }).cause;
  return cause !== undefined && cause !== error && isDependencyUnavailable(cause);
}

/**
 * The DomainError a dependency failure answers as: `service-unavailable` (503, Retry-After 1)
 * when the database is down or unreachable, `upstream-timeout` (504) when a statement ran past
 * its deadline; undefined for anything else (which stays masked as `internal`).
 */
export function dependencyFailure(error: unknown, what = "the database"): DomainError | undefined {
  if (error instanceof DomainError) return undefined;
  if (isDependencyUnavailable(error)) {
    return new DomainError(
      "service-unavailable",
      `${what} is unavailable; retry shortly`,
      { retryAfter: 1 },
      { cause: error },
    );
  }
  if ((error as { code?: unknown } | null)?.code === QUERY_CANCELED) {
    return new DomainError(
      "upstream-timeout",
      `${what} did not answer in time`,
      {},
      { cause: error },
    );
  }
  return undefined;
}
