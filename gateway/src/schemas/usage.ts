import { wire } from "@switchboard/proto";
import { z } from "zod";
import {
  cursorParam,
  dateTimeParam,
  limitParam,
  page,
  resourceId,
  text,
  timestamp,
} from "./common.js";
import { story } from "./story.js";

/** docs/api.md "Usage": the kinds of record the ledger holds. */
export const usageKinds = wire.usageKind.values;

export const usageEventsQuery = z
  .object({
    kind: z.enum(usageKinds).optional().describe("Only records of this kind."),
    resource_id: z
      .string()
      .min(1)
      .max(255)
      .optional()
      .describe("Only records about this resource (e.g. a hld_, call_ or num_ id)."),
    since: dateTimeParam("Only records with occurred_at at or after this time (inclusive)."),
    until: dateTimeParam("Only records with occurred_at before this time (exclusive)."),
    limit: limitParam,
    cursor: cursorParam,
  })
  .strict();

export const usageEvent = z
  .object({
    id: resourceId("use"),
    kind: z
      .enum(usageKinds)
      .describe("api.request for every request; a business fact's kind otherwise"),
    occurred_at: timestamp.describe("RFC 3339 UTC: when the request arrived or the fact happened"),
    account_id: text("The account the record belongs to", story.account),
    principal: z
      .string()
      .nullable()
      .describe(
        "api.request: the OAuth client id or tok_ service token id; null if none was verified",
      ),
    request_id: z.string().nullable().describe("The X-Request-Id of the request (api.request)"),
    resource_id: z.string().nullable().describe("The resource the request or fact is about"),
    method: z.string().nullable().describe("api.request: the HTTP method"),
    route: z
      .string()
      .nullable()
      .describe(
        "api.request: the route template, e.g. /api/numbers/holds/{hold_id}; null for an unknown path",
      ),
    status: z.number().int().nullable().describe("api.request: the HTTP status of the reply"),
    replayed: z
      .boolean()
      .nullable()
      .describe("api.request: true when the reply was an Idempotency-Key replay"),
    quantity: z
      .number()
      .int()
      .describe(
        "1 per request, hold, number, call, delivery or run; seconds for call.completed; segments for message.sent",
      ),
    unit: z.string().describe(wire.usageUnit.values.join(" | ")),
    attributes: z
      .record(z.string(), z.unknown())
      .describe("Kind-specific details, e.g. latency_ms of api.request"),
    kid: z.string().describe("The signing key, published in /.well-known/jwks.json"),
    signature: z
      .string()
      .describe(
        "Compact JWS with detached payload (<header>..<signature>, alg EdDSA, kid) over the RFC 8785 canonical JSON of this record without signature",
      ),
  })
  .meta({
    id: "UsageEvent",
    description: "One signed, append-only usage record",
    examples: [
      {
        id: story.usageId,
        kind: "api.request",
        occurred_at: "2026-11-24T21:46:00.012Z",
        account_id: story.account,
        principal: story.clientId,
        request_id: story.requestId,
        resource_id: story.callId,
        method: "POST",
        route: "/api/calls/outbound",
        status: 201,
        replayed: false,
        quantity: 1,
        unit: "request",
        attributes: { latency_ms: 38 },
        kid: "use-key-1",
        signature:
          "eyJhbGciOiJFZERTQSIsImtpZCI6InVzZS1rZXktMSIsImI2NCI6ZmFsc2UsImNyaXQiOlsiYjY0Il19..Qm9vdHN0cmFwcGVkIHNpZ25hdHVyZSBvZiB0aGUgcmVjb3JkIGluIHRoZSBzdG9yeQ",
      },
    ],
  });

export const usageEventsPage = page(usageEvent).meta({ id: "UsageEventPage" });
