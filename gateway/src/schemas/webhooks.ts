import { wire } from "@switchboard/proto";
import { z } from "zod";
import { cursorParam, limitParam, page, resourceId, text, timestamp } from "./common.js";
import { story, storyDelivery, storySubscription } from "./story.js";
import { createdWindowQuery } from "./created-window.js";

/** docs/api.md "Webhook subscriptions": the REST shapes of subscriptions and deliveries. */
export const subscriptionStatuses = wire.subscriptionStatus.values;
const webhookSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
export const deliveryStatuses = wire.deliveryStatus.values;
/** The statuses an account may set (disabled is the platform's). */
const settableStatuses = ["active", "paused"] as const satisfies wire.SubscriptionStatusValue[];

const eventPattern = z
  .string()
  .min(1)
  .max(100)
  .describe("An event type (message.delivered), a prefix wildcard (call.*) or * for every event")
  .meta({ examples: ["call.*"] });

export const webhookSubscription = z
  .object({
    id: resourceId("whs"),
    url: text("The https endpoint deliveries are POSTed to", story.webhookUrl),
    events: z.array(z.string()).describe("Event types and patterns the subscription receives"),
    description: z
      .string()
      .nullable()
      .describe("What the subscription is for, for people")
      .meta({ examples: [storySubscription.description] }),
    status: z
      .enum(subscriptionStatuses)
      .describe("active; paused (by you); disabled (by the platform: see disabled_reason)"),
    disabled_reason: z
      .enum(wire.disabledReason.values)
      .nullable()
      .describe("gone: the endpoint answered 410; failing: every attempt failed for days"),
    previous_secret_expires_at: timestamp
      .nullable()
      .describe("After a rotation: until when the previous secret still signs beside the new one"),
    created_at: timestamp.describe("When the subscription was created"),
    updated_at: timestamp.describe("When it last changed"),
  })
  .meta({ id: "WebhookSubscription", examples: [storySubscription] });

export const webhookSubscriptionWithSecret = webhookSubscription
  .extend({
    secret: text(
      "whsec_<base64>: the Standard Webhooks signing secret, shown only in this response",
      webhookSecret,
    ),
  })
  .meta({
    id: "WebhookSubscriptionWithSecret",
    examples: [{ ...storySubscription, secret: webhookSecret }],
  });

export const createSubscriptionRequest = z
  .object({
    url: z
      .string()
      .min(1)
      .max(2048)
      .describe("https URL of a public host (plain http only for hosts exempted by configuration)")
      .meta({ examples: [story.webhookUrl] }),
    events: z
      .array(eventPattern)
      .min(1)
      .max(100)
      .describe("Event types and patterns to receive (1–100)"),
    description: z
      .string()
      .max(500)
      .optional()
      .describe("What the subscription is for, for people")
      .meta({ examples: [storySubscription.description] }),
  })
  .strict();

export const updateSubscriptionRequest = z
  .object({
    url: z
      .string()
      .min(1)
      .max(2048)
      .optional()
      .describe("A new endpoint, checked as at creation")
      .meta({ examples: [story.webhookUrl] }),
    events: z
      .array(eventPattern)
      .min(1)
      .max(100)
      .optional()
      .describe("Replaces the event types and patterns"),
    description: z
      .string()
      .max(500)
      .nullable()
      .optional()
      .describe("null clears it")
      .meta({ examples: [storySubscription.description] }),
    status: z
      .enum(settableStatuses)
      .optional()
      .describe("paused stops deliveries; active resumes (and re-enables a disabled subscription)"),
  })
  .strict();

export const webhookDeliveryAttempt = z
  .object({
    attempt: z.number().int().describe("1-based over the delivery's life (replays continue it)"),
    started_at: timestamp.describe("When the attempt started"),
    duration_ms: z.number().int().describe("How long the endpoint took to answer (or fail)"),
    status_code: z.number().int().nullable().describe("The endpoint's HTTP status, if it answered"),
    outcome: z
      .enum(wire.attemptOutcome.values)
      .describe("delivered; retrying (another attempt is due); failed (the last attempt)"),
    error: z
      .string()
      .nullable()
      .describe(
        "Error class: http_status, redirect, gone, timeout, connection_refused, connection_reset, tls_error, dns_failure, unsafe_url, unreachable, network_error",
      )
      .meta({ examples: ["timeout"] }),
  })
  .meta({ id: "WebhookDeliveryAttempt" });

export const webhookDelivery = z
  .object({
    id: resourceId("wdl"),
    subscription_id: resourceId("whs"),
    event_id: resourceId("evt").describe(
      "evt_<ULID>: the webhook-id header, stable across retries",
    ),
    event_type: text("The event's type", "call.completed"),
    status: z
      .enum(deliveryStatuses)
      .describe("pending (retries due), delivered, or failed (retries exhausted: retry it)"),
    attempts: z.number().int().describe("Attempts so far"),
    next_attempt_at: timestamp.nullable().describe("While pending: when the next attempt is due"),
    last_attempt_at: timestamp.nullable().describe("When the last attempt started"),
    last_status_code: z
      .number()
      .int()
      .nullable()
      .describe("The endpoint's HTTP status at the last attempt, if it answered"),
    last_error: z
      .string()
      .nullable()
      .describe(
        "The last attempt's error class, or why the delivery ended without one (subscription_paused, subscription_disabled, subscription_deleted)",
      )
      .meta({ examples: ["timeout"] }),
    delivered_at: timestamp.nullable().describe("When the endpoint accepted it (2xx)"),
    failed_at: timestamp.nullable().describe("When its retries ran out"),
    created_at: timestamp.describe("When the delivery was queued"),
  })
  .meta({ id: "WebhookDelivery", examples: [storyDelivery] });

export const webhookDeliveryDetail = webhookDelivery
  .extend({ attempt_log: z.array(webhookDeliveryAttempt).describe("Oldest first (the last 100)") })
  .meta({
    id: "WebhookDeliveryDetail",
    examples: [
      {
        ...storyDelivery,
        attempt_log: [
          {
            attempt: 1,
            started_at: storyDelivery.last_attempt_at,
            duration_ms: 48,
            status_code: 200,
            outcome: "delivered",
            error: null,
          },
        ],
      },
    ],
  });

export const subscriptionsQuery = z.object({ limit: limitParam, cursor: cursorParam }).strict();

export const deliveriesQuery = z
  .object({
    status: z.enum(deliveryStatuses).optional().describe("Only deliveries in this status"),
    resource_id: z
      .string()
      .max(31)
      .regex(/^(call|msg)_[0-9a-z]{26}$/, "must be a call or message id (call_…, msg_…)")
      .optional()
      .describe(
        "Only deliveries of this call's or message's events: its status callbacks' log (under the status-callback subscription)",
      ),
    ...createdWindowQuery,
    limit: limitParam,
    cursor: cursorParam,
  })
  .strict();

export const subscriptionsPage = page(webhookSubscription).meta({ id: "WebhookSubscriptionPage" });
export const deliveriesPage = page(webhookDelivery).meta({ id: "WebhookDeliveryPage" });

export const statusCallbackSecret = z
  .object({
    subscription_id: resourceId("whs").describe(
      "The subscription status callbacks are delivered under: the Switchboard-Subscription-Id of each, and its deliveries are their log (GET …/subscriptions/{id}/deliveries)",
    ),
    secret: text(
      "whsec_<base64>: the Standard Webhooks secret that signs every status callback",
      webhookSecret,
    ),
    previous_secret_expires_at: timestamp
      .nullable()
      .describe("After a rotation: until when the previous secret still signs beside this one"),
  })
  .meta({ id: "StatusCallbackSecret" });
