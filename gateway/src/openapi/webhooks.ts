import type { z } from "zod";
import { webhookEventDocs, webhookEventSchemas, webhookEventTypes } from "../schemas/events.js";
import type { JsonSchema } from "./schemas.js";
import { webhookEventExample } from "./webhook-examples.js";

/** The header that names the subscription whose secret signed a delivery. */
export const subscriptionHeader = "Switchboard-Subscription-Id";

/** The request headers of every delivery (Standard Webhooks 1.0, plus the subscription). */
const deliveryHeaders = [
  {
    name: "webhook-id",
    description: "The event id (evt_…): the same on every retry and replay; dedupe on it",
    schema: { type: "string", pattern: "^evt_[0-9a-z]{26}$" },
    example: "evt_01jd2kd4e5f6g7h8j9k0m1n2p3",
  },
  {
    name: "webhook-timestamp",
    description:
      "Unix seconds when this attempt was signed; refuse deliveries older than a few minutes",
    schema: { type: "string", pattern: "^[0-9]+$" },
    example: "1795038344",
  },
  {
    name: "webhook-signature",
    description:
      "Space-separated `v1,<base64 HMAC-SHA256 of id.timestamp.body>` entries, one per secret that signs (two during a rotation's overlap); the key is the base64 after whsec_",
    schema: { type: "string", pattern: "^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$" },
    example: "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
  },
  {
    name: subscriptionHeader,
    description:
      "The subscription (whs_…) whose secret signed this delivery: pick the secret by it when one endpoint serves several subscriptions. Not covered by the signature; the signature is what proves it.",
    schema: { type: "string", pattern: "^whs_[0-9a-z]{26}$" },
    example: "whs_01jd2k6e7f8g9h0j1k2m3n4p5q",
  },
].map((header) => ({ ...header, in: "header", required: true }));

const deliveryDescription =
  "POSTed as JSON to each active subscription whose events select this type, signed per Standard Webhooks 1.0. Answer 2xx within 10 s; anything else is retried on the retry schedule (410 disables the subscription). Deliveries can arrive more than once and out of order: dedupe on webhook-id, order a resource's events by sequence.";

/**
 * The document's `webhooks` section (OpenAPI 3.1): one entry per deliverable event type, its
 * payload a component (`<Type>Event`) with an example, and the delivery's headers.
 */
export function webhooksSection(
  toSchema: (schema: z.ZodType, io: "output") => JsonSchema,
): Record<string, unknown> {
  return Object.fromEntries(
    webhookEventTypes.map((type) => [
      type,
      {
        post: {
          operationId: `${type.replace(/[._]([a-z])/g, (_, c: string) => c.toUpperCase())}Webhook`,
          summary: webhookEventDocs[type].summary,
          description: deliveryDescription,
          tags: ["Webhooks"],
          security: [],
          parameters: deliveryHeaders,
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: toSchema(webhookEventSchemas[type], "output"),
                example: webhookEventExample(type),
              },
            },
          },
          responses: {
            "200": { description: "Any 2xx: delivered (the body is ignored)" },
            "410": { description: "Gone: the subscription is disabled, with no further attempts" },
          },
        },
      },
    ]),
  );
}
