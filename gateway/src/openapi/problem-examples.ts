import type { ProblemKind } from "@switchboard/kit";
import { httpProblem, problemCode, problemType } from "../http/problem.js";
import { story } from "../schemas/story.js";

/** A detail each kind's example shows: what the gateway says in that case, in the story. */
const details: Record<ProblemKind, (noun: string) => string> = {
  "malformed-request": () => "the body is not valid JSON",
  "invalid-idempotency-key": () =>
    "Idempotency-Key must be 1–255 of A-Z a-z 0-9 _ : . - (or an RFC 8941 quoted string)",
  "invalid-cursor": () => "the cursor was issued for different filters",
  unauthenticated: () => "an Authorization: Bearer token is required",
  "invalid-token": () => "the access token has expired",
  "insufficient-scope": () => "the credential lacks the permission this operation needs",
  "not-found": (noun) => `the ${noun} was not found`,
  "unsupported-version": () => "API version v2 is not supported; the supported versions: v1",
  "method-not-allowed": () => "PUT is not allowed here",
  "request-timeout": () => "the request was not received in time",
  "idempotency-mismatch": () =>
    "Idempotency-Key 5f0c2a9e-3b7d-4e21-9a6f-0d8c1b2e4f73 was used with a different request",
  "idempotency-in-progress": () =>
    "a request with Idempotency-Key 5f0c2a9e-3b7d-4e21-9a6f-0d8c1b2e4f73 is still in progress",
  "number-unavailable": () => `${story.ours} is not available`,
  "invalid-state": (noun) => `the ${noun} is not in a state that allows this`,
  "seat-busy": () => "the seat is at its limit of 1 concurrent call",
  conflict: () => `an agent named ${story.agent} already exists`,
  "payload-too-large": () => "the JSON body is larger than 64 KiB",
  "unsupported-media-type": () => "the body must be application/json",
  "headers-too-large": () => "the request's header fields are larger than 16 KiB",
  "validation-failed": () => "1 field failed validation",
  "caller-id-not-owned": () => `${story.ours} is not a number assigned to this account`,
  "consent-required": () => `no granted consent covers ${story.recipient} on sms`,
  "recipient-opted-out": () => `${story.recipient} opted out of sms (STOP)`,
  "channel-unavailable": () => "the platform's carrier cannot send rcs",
  "template-signature-invalid": () =>
    `template ${story.templateId} version 1 no longer matches its signature`,
  "unsafe-webhook-url": () => "the URL's host resolves to a private address",
  "hold-limit-reached": () => "the account already holds 25 numbers",
  "rate-limited": () => "too many requests for calls:write; retry after 2 s",
  internal: () => "An internal error occurred.",
  "service-unavailable": () => "call-control is unavailable; retry shortly",
  "upstream-timeout": () => "call-control did not answer in time",
};

/** Extension members a kind's problems carry (docs/api.md "Errors"). */
const extensions = (kind: ProblemKind, scope: string | null): Record<string, unknown> => {
  if (kind === "validation-failed") {
    return {
      errors: [{ pointer: "#/to", detail: "must be an E.164 number such as +14155550100" }],
    };
  }
  if (kind === "insufficient-scope" && scope) return { required_scope: scope };
  return {};
};

/**
 * The named examples of one problem response: one per kind, each the problem+json the gateway
 * answers (the real `type` URI, title, status and code of the kind).
 */
export function problemExamples(
  kinds: ProblemKind[],
  context: { errorsUrl: string; scope: string | null; noun: string },
) {
  return Object.fromEntries(
    kinds.map((kind) => [
      kind,
      {
        summary: httpProblem(kind).title,
        value: {
          type: problemType(context.errorsUrl, kind),
          title: httpProblem(kind).title,
          status: httpProblem(kind).status,
          code: problemCode(kind),
          detail: details[kind](context.noun),
          instance: `urn:switchboard:request:${story.requestId}`,
          ...extensions(kind, context.scope),
        },
      },
    ]),
  );
}
