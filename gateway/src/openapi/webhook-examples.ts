import type { WebhookEventType } from "../schemas/events.js";
import { story, storyCall, storyInboundCall } from "../schemas/story.js";

/**
 * One consistent story per event type, for the document's `webhooks` section: the story of
 * every example (schemas/story.ts): the account holds and assigns +14155550123, calls
 * +14155550188 from it, texts +14155550177, who later texts STOP. Every example validates
 * against its event's schema (gateway/test).
 */
const account = story.account;
const ours = story.ours;
const recipient = story.recipient;
const numberId = story.numberId;
const holdId = story.holdId;
const callId = story.callId;
const messageId = story.messageId;
const consentId = story.consentId;
const subscriptionId = story.subscriptionId;

/** The REST call at a stage, plus what its events add (call_id, attestation). */
const call = (status: string, times: { answered?: string; ended?: string } = {}) => ({
  ...storyCall(times.ended ? "completed" : times.answered ? "in_progress" : "queued"),
  status,
  call_id: callId,
  attestation: "A",
});

const message = (status: string, updatedAt: string, extra: Record<string, unknown> = {}) => ({
  id: messageId,
  message_id: messageId,
  direction: "outbound",
  status,
  channel: "sms",
  channel_used: status === "queued" ? null : "sms",
  fallback: null,
  fallback_applied: false,
  to: recipient,
  from: ours,
  encoding: "GSM-7",
  segments: 1,
  media_count: 0,
  template_id: story.templateId,
  template_version: 1,
  consent_id: consentId,
  error_code: null,
  error_message: null,
  in_reply_to: null,
  status_callback: null,
  created_at: "2026-11-24T21:50:00.000Z",
  updated_at: updatedAt,
  ...extra,
});

const data: Record<WebhookEventType, Record<string, unknown>> = {
  "number.held": {
    number_id: numberId,
    number: ours,
    hold_id: holdId,
    expires_at: "2026-11-24T21:55:44.123Z",
  },
  "number.hold_expired": {
    number_id: numberId,
    number: ours,
    hold_id: holdId,
    expired_at: "2026-11-24T21:55:44.123Z",
  },
  "number.released": {
    number_id: numberId,
    number: ours,
    hold_id: holdId,
    reason: "hold_released",
  },
  "number.assigned": {
    number_id: numberId,
    number: ours,
    hold_id: holdId,
    seat_id: story.seatId,
  },
  "call.incoming": { ...storyInboundCall("ringing"), call_id: callId, attestation: null },
  "call.initiated": call("initiated"),
  "call.ringing": call("ringing"),
  "call.answered": call("in_progress", { answered: "2026-11-24T21:46:04.000Z" }),
  "call.completed": call("completed", {
    answered: "2026-11-24T21:46:04.000Z",
    ended: "2026-11-24T21:47:39.000Z",
  }),
  "message.queued": message("queued", "2026-11-24T21:50:00.000Z"),
  "message.sent": message("sent", "2026-11-24T21:50:01.000Z", { quantity: 1, unit: "segment" }),
  "message.delivered": message("delivered", "2026-11-24T21:50:03.000Z"),
  "message.failed": message("failed", "2026-11-24T21:50:02.000Z", {
    error_code: "carrier_rejected",
    error_message: "The carrier refused the destination",
  }),
  "message.received": {
    ...message("received", "2026-11-25T08:12:00.000Z"),
    id: "msg_01jd3m2n3p4q5r6s7t8v9w0x1y",
    message_id: "msg_01jd3m2n3p4q5r6s7t8v9w0x1y",
    direction: "inbound",
    to: ours,
    from: recipient,
    template_id: null,
    template_version: null,
    consent_id: null,
    body: "STOP",
    keyword: "stop",
    created_at: "2026-11-25T08:12:00.000Z",
  },
  "consent.revoked": {
    id: consentId,
    phone_number: recipient,
    channels: ["sms"],
    source: "web_form",
    status: "revoked",
    captured_at: "2026-11-20T10:00:00.000Z",
    revoked_at: "2026-11-25T08:12:00.000Z",
    revocation_source: "keyword",
    revocation_keyword: "stop",
  },
  "webhook.test": {
    subscription_id: subscriptionId,
    message: "A test event from Switchboard: your endpoint receives and verifies webhooks.",
  },
  "webhook.subscription_disabled": {
    subscription_id: subscriptionId,
    url: story.webhookUrl,
    reason: "gone",
    disabled_at: "2026-11-26T03:00:00.000Z",
  },
};

const sequences: Partial<Record<WebhookEventType, number>> = {
  "number.hold_expired": 2,
  "number.released": 2,
  "number.assigned": 2,
  "call.initiated": 2,
  "call.ringing": 3,
  "call.answered": 4,
  "call.completed": 5,
  "message.sent": 3,
  "message.delivered": 4,
  "message.failed": 3,
  "consent.revoked": 2,
};

/** The example payload of one event type. */
export const webhookEventExample = (type: WebhookEventType) => ({
  id: story.eventId,
  type,
  timestamp:
    (data[type].updated_at as string | undefined) ??
    (data[type].ended_at as string | undefined) ??
    "2026-11-24T21:45:44.123Z",
  account_id: account,
  sequence: sequences[type] ?? 1,
  data: data[type],
});
