import type { DomainError } from "@switchboard/kit";
import { PROBLEM_MEDIA_TYPE, toProblem } from "../http/problem.js";
import type { Reply } from "../http/route-spec.js";
import type { StoredResponse } from "./idempotency-store.js";

/** Response headers replayed with the stored body. */
const REPLAYED_HEADERS = ["Location"];

export const REPLAYED_HEADER = "Idempotent-Replayed";

/**
 * Kept for replay: 2xx and the 4xx the operation itself produced. Not kept (the retry runs
 * again): 401 and 403 (the credential may be fixed), 429 (not executed) and every 5xx.
 */
export const isKeptStatus = (status: number): boolean =>
  (status >= 200 && status < 300) ||
  (status >= 400 && status < 500 && status !== 401 && status !== 403 && status !== 429);

/** The reply as it goes on the wire (the same serialisation as sendReply). */
export function storedFromReply(reply: Reply): StoredResponse {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = reply.headers?.[name];
    if (value !== undefined) headers[name] = value;
  }
  if (reply.body === undefined)
    return { status: reply.status, mediaType: null, body: null, headers };
  const asText = typeof reply.body === "string" && reply.mediaType !== undefined;
  return {
    status: reply.status,
    mediaType: reply.mediaType ?? "application/json",
    body: asText ? (reply.body as string) : JSON.stringify(reply.body),
    headers,
  };
}

/** The problem+json an operation's DomainError turns into, as the problem mapper renders it. */
export function storedFromProblem(
  error: DomainError,
  context: { requestId: string; errorsUrl: string },
): StoredResponse {
  const problem = toProblem(error, context);
  return {
    status: problem.status,
    mediaType: PROBLEM_MEDIA_TYPE,
    body: JSON.stringify(problem.body),
    headers: {},
  };
}

/** The replay of a stored response, marked `Idempotent-Replayed: true`. */
export function replayOf(stored: StoredResponse): Reply {
  return {
    status: stored.status,
    headers: { ...stored.headers, [REPLAYED_HEADER]: "true" },
    ...(stored.body !== null
      ? { body: stored.body, mediaType: stored.mediaType ?? "application/json" }
      : {}),
  };
}
