import { wire } from "@switchboard/proto";
import { z } from "zod";
import { call } from "./calls.js";
import { consent, message } from "./messages.js";
import { story } from "./story.js";
import {
  cursorParam,
  dateTimeParam,
  e164,
  limitParam,
  page,
  resourceId,
  text,
  timestamp,
} from "./common.js";

/**
 * The events a webhook subscription receives (docs/api.md "Webhook subscriptions"): each one's
 * `data`, as the producing service writes it to its outbox. The payload around it is
 * `{id, type, timestamp, account_id, sequence, data}` (webhookEvent).
 */
const numberData = {
  number_id: resourceId("num").describe("The number's id"),
  number: e164.describe("The number, E.164"),
};

const heldData = z.object({
  ...numberData,
  hold_id: resourceId("hld"),
  expires_at: timestamp.describe("When the hold lapses unless assigned or released"),
});

const holdExpiredData = z.object({
  ...numberData,
  hold_id: resourceId("hld"),
  expired_at: timestamp.describe("When the hold lapsed"),
});

const releasedData = z.object({
  ...numberData,
  hold_id: resourceId("hld").optional().describe("Present when a hold was released"),
  reason: z
    .enum(["hold_released", "number_released"])
    .describe("hold_released: a hold was given up; number_released: an assigned number was"),
});

const assignedData = z.object({
  ...numberData,
  hold_id: resourceId("hld").describe("The hold the number was assigned from"),
  seat_id: resourceId("seat").nullable().describe("The seat it was assigned to, if any"),
});

/** A call event's data: the call as GET /api/calls/{id} shows it, plus two copied fields. */
const callData = call.extend({
  call_id: resourceId("call").describe("The call's id (same as id)"),
  attestation: z.enum(wire.attestation.values).nullable().describe("STIR/SHAKEN level, outbound"),
});

/** A message event's data: the message as it is after the change (no body when outbound). */
const messageData = message
  .pick({
    id: true,
    direction: true,
    status: true,
    channel: true,
    channel_used: true,
    fallback: true,
    fallback_applied: true,
    to: true,
    from: true,
    encoding: true,
    segments: true,
    template_id: true,
    template_version: true,
    consent_id: true,
    error_code: true,
    error_message: true,
    in_reply_to: true,
    status_callback: true,
    created_at: true,
    updated_at: true,
  })
  .extend({
    message_id: resourceId("msg").describe("The message's id (same as id)"),
    media_count: z.number().int().min(0).describe("How many media the message carries"),
    body: text("Inbound messages only: the text received", "STOP").optional(),
    keyword: z
      .string()
      .nullable()
      .optional()
      .describe("Inbound messages only: the keyword recognised (stop, start, help…)")
      .meta({ examples: ["stop"] }),
    quantity: z.number().int().optional().describe("message.sent: the segments billed"),
    unit: z.literal("segment").optional().describe("message.sent: the unit of quantity"),
  });

const consentData = consent.omit({ evidence: true, created_at: true });

const testData = z.object({
  subscription_id: resourceId("whs").describe("The subscription tested"),
  message: text(
    "A fixed sentence saying what the event is",
    "A test event from Switchboard: your endpoint receives and verifies webhooks.",
  ),
});

const disabledData = z.object({
  subscription_id: resourceId("whs").describe("The subscription disabled"),
  url: text("Its endpoint", story.webhookUrl),
  reason: z
    .enum(wire.disabledReason.values)
    .describe("gone: the endpoint answered 410; failing: every attempt failed for days"),
  disabled_at: timestamp.describe("When it was disabled"),
});

interface EventDoc {
  data: z.ZodType;
  summary: string;
}

/** Every deliverable event type (the webhook service's catalog), its data and what it means. */
export const webhookEventDocs = {
  "number.held": { data: heldData, summary: "A number was held for the account" },
  "number.hold_expired": {
    data: holdExpiredData,
    summary: "A hold lapsed without being assigned or released",
  },
  "number.released": {
    data: releasedData,
    summary: "A hold was released, or an assigned number given back",
  },
  "number.assigned": { data: assignedData, summary: "A held number was assigned to the account" },
  "call.incoming": { data: callData, summary: "An inbound call is ringing on one of your numbers" },
  "call.initiated": { data: callData, summary: "An outbound call was handed to the carrier" },
  "call.ringing": { data: callData, summary: "The called party is ringing" },
  "call.answered": { data: callData, summary: "The call was answered" },
  "call.completed": { data: callData, summary: "The call ended (answered or not)" },
  "message.queued": { data: messageData, summary: "An outbound message was accepted" },
  "message.sent": { data: messageData, summary: "The carrier accepted the message" },
  "message.delivered": { data: messageData, summary: "The handset confirmed delivery" },
  "message.failed": { data: messageData, summary: "The message could not be sent" },
  "message.received": { data: messageData, summary: "An inbound message arrived" },
  "consent.revoked": {
    data: consentData,
    summary: "A recipient's consent was revoked (STOP, or through the API)",
  },
  "webhook.test": { data: testData, summary: "A test event sent to one subscription" },
  "webhook.subscription_disabled": {
    data: disabledData,
    summary: "The platform disabled a subscription (410 Gone, or failing for days)",
  },
} satisfies Record<string, EventDoc>;

export type WebhookEventType = keyof typeof webhookEventDocs;
export const webhookEventTypes = Object.keys(webhookEventDocs) as WebhookEventType[];

/** `number.hold_expired` → `NumberHoldExpiredEvent`: the event's component name. */
export const eventComponentName = (type: string) =>
  `${type
    .split(/[._]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("")}Event`;

/** The payload delivered for one event type (Standard Webhooks body). */
const eventPayload = (type: WebhookEventType) =>
  z
    .object({
      id: resourceId("evt").describe("evt_<ULID>: also the webhook-id header; dedupe on it"),
      type: z.literal(type).describe("The event type"),
      timestamp: timestamp.describe("When the change was committed"),
      account_id: text("The account the event belongs to", story.account),
      sequence: z
        .number()
        .int()
        .min(1)
        .describe("1, 2, 3… per resource: order a resource's events by it"),
      data: webhookEventDocs[type].data.describe(
        "What the event is about, as it is after the change",
      ),
    })
    .meta({ id: eventComponentName(type), description: webhookEventDocs[type].summary });

type EventPayload = ReturnType<typeof eventPayload>;

/** Each event type's payload schema (one instance each: its id names one component). */
export const webhookEventSchemas = Object.fromEntries(
  webhookEventTypes.map((type) => [type, eventPayload(type)]),
) as Record<WebhookEventType, EventPayload>;

/** Any event of the catalog, told apart by `type` (GET /api/events). */
export const anyWebhookEvent = z
  .discriminatedUnion(
    "type",
    Object.values(webhookEventSchemas) as [EventPayload, ...EventPayload[]],
  )
  .meta({ id: "WebhookEvent" });

export const eventsQuery = z
  .object({
    type: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe("Only events of this type (call.completed) or prefix (call.*)"),
    created_after: dateTimeParam("Only events committed after this time (exclusive)"),
    limit: limitParam,
    cursor: cursorParam,
  })
  .strict();

export const eventsPage = page(anyWebhookEvent).meta({ id: "WebhookEventPage" });
