import { wire } from "@switchboard/proto";
import { z } from "zod";
import { cursorParam, limitParam, page, resourceId, timestamp } from "./common.js";

/** docs/api.md "Webhook subscriptions": the REST shapes of subscriptions and deliveries. */
export const subscriptionStatuses = wire.subscriptionStatus.values;
export const deliveryStatuses = wire.deliveryStatus.values;
/** The statuses an account may set (disabled is the platform's). */
const settableStatuses = ["active", "paused"] as const satisfies wire.SubscriptionStatusValue[];

const eventPattern = z
  .string()
  .min(1)
  .max(100)
  .describe("An event type (message.delivered), a prefix wildcard (call.*) or * for every event");

export const webhookSubscription = z
  .object({
    id: resourceId("whs"),
    url: z.string().describe("The https endpoint deliveries are POSTed to"),
    events: z.array(z.string()).describe("Event types and patterns the subscription receives"),
    description: z.string().nullable(),
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
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: "WebhookSubscription" });

export const webhookSubscriptionWithSecret = webhookSubscription
  .extend({
    secret: z
      .string()
      .describe(
        "whsec_<base64>: the Standard Webhooks signing secret, shown only in this response",
      ),
  })
  .meta({ id: "WebhookSubscriptionWithSecret" });

export const createSubscriptionRequest = z
  .object({
    url: z
      .string()
      .min(1)
      .max(2048)
      .describe("https URL of a public host (plain http only for hosts exempted by configuration)"),
    events: z.array(eventPattern).min(1).max(100),
    description: z.string().max(500).optional(),
  })
  .strict();

export const updateSubscriptionRequest = z
  .object({
    url: z.string().min(1).max(2048).optional(),
    events: z.array(eventPattern).min(1).max(100).optional(),
    description: z.string().max(500).nullable().optional().describe("null clears it"),
    status: z
      .enum(settableStatuses)
      .optional()
      .describe("paused stops deliveries; active resumes (and re-enables a disabled subscription)"),
  })
  .strict();

export const webhookDeliveryAttempt = z
  .object({
    attempt: z.number().int().describe("1-based over the delivery's life (replays continue it)"),
    started_at: timestamp,
    duration_ms: z.number().int(),
    status_code: z.number().int().nullable().describe("The endpoint's HTTP status, if it answered"),
    outcome: z.enum(wire.attemptOutcome.values),
    error: z
      .string()
      .nullable()
      .describe(
        "Error class: http_status, redirect, gone, timeout, connection_refused, connection_reset, tls_error, dns_failure, unsafe_url, unreachable, network_error",
      ),
  })
  .meta({ id: "WebhookDeliveryAttempt" });

export const webhookDelivery = z
  .object({
    id: resourceId("wdl"),
    subscription_id: resourceId("whs"),
    event_id: resourceId("evt").describe(
      "evt_<ULID>: the webhook-id header, stable across retries",
    ),
    event_type: z.string(),
    status: z.enum(deliveryStatuses),
    attempts: z.number().int(),
    next_attempt_at: timestamp.nullable().describe("While pending: when the next attempt is due"),
    last_attempt_at: timestamp.nullable(),
    last_status_code: z.number().int().nullable(),
    last_error: z
      .string()
      .nullable()
      .describe(
        "The last attempt's error class, or why the delivery ended without one (subscription_paused, subscription_disabled, subscription_deleted)",
      ),
    delivered_at: timestamp.nullable(),
    failed_at: timestamp.nullable(),
    created_at: timestamp,
  })
  .meta({ id: "WebhookDelivery" });

export const webhookDeliveryDetail = webhookDelivery
  .extend({ attempt_log: z.array(webhookDeliveryAttempt).describe("Oldest first (the last 100)") })
  .meta({ id: "WebhookDeliveryDetail" });

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
    secret: z
      .string()
      .describe("whsec_<base64>: the Standard Webhooks secret that signs every status callback"),
    previous_secret_expires_at: timestamp
      .nullable()
      .describe("After a rotation: until when the previous secret still signs beside this one"),
  })
  .meta({ id: "StatusCallbackSecret" });
