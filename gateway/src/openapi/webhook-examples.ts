import type { WebhookEventType } from "../schemas/events.js";

/**
 * One consistent story per event type, for the document's `webhooks` section: the account
 * holds and assigns +14155550123, calls +14155550188 from it, texts +14155550177, who later
 * texts STOP. Every example validates against its event's schema (gateway/test).
 */
const account = "acct_01jd2k8w7c3q9v0m5n6p7r8s9t";
const ours = "+14155550123";
const callee = "+14155550188";
const recipient = "+14155550177";
const numberId = "num_01jd2k8w7c3q9v0m5n6p7r8s9t";
const holdId = "hld_01jd2k9a1b2c3d4e5f6g7h8j9k";
const callId = "call_01jd2kb0q1r2s3t4v5w6x7y8z9";
const messageId = "msg_01jd2kc3a4b5c6d7e8f9g0h1j2";
const consentId = "cns_01jd2k7m8n9p0q1r2s3t4v5w6x";
const subscriptionId = "whs_01jd2k6e7f8g9h0j1k2m3n4p5q";

const call = (status: string, times: { answered?: string; ended?: string } = {}) => ({
  id: callId,
  call_id: callId,
  direction: "outbound",
  status,
  to: callee,
  from: ours,
  agent: "support-bot",
  seat_id: null,
  route_id: null,
  stir_shaken: { attestation: "A", identity: "eyJhbGciOiJFUzI1NiIsInBwdCI6InNoYWtlbiJ9…" },
  attestation: "A",
  client_state: "order-4711",
  timeout_seconds: 30,
  time_limit_seconds: 14400,
  hangup_cause: times.ended ? "normal_clearing" : null,
  hangup_source: times.ended ? "callee" : null,
  sip_code: times.ended ? 200 : null,
  early_media: false,
  created_at: "2026-11-24T21:46:00.000Z",
  answered_at: times.answered ?? null,
  ended_at: times.ended ?? null,
  duration_seconds: times.ended ? 95 : null,
  status_callback: { url: "https://example.com/calls/status", events: [] },
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
  template_id: "tpl_01jd2k5c6d7e8f9g0h1j2k3m4n",
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
  "number.assigned": { number_id: numberId, number: ours, hold_id: holdId, seat_id: null },
  "call.incoming": {
    ...call("ringing"),
    direction: "inbound",
    to: ours,
    from: callee,
    route_id: "rte_01jd2k4b5c6d7e8f9g0h1j2k3m",
    stir_shaken: null,
    attestation: null,
    client_state: null,
    status_callback: null,
  },
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
    url: "https://example.com/hooks",
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
  id: "evt_01jd2kd4e5f6g7h8j9k0m1n2p3",
  type,
  timestamp:
    (data[type].updated_at as string | undefined) ??
    (data[type].ended_at as string | undefined) ??
    "2026-11-24T21:45:44.123Z",
  account_id: account,
  sequence: sequences[type] ?? 1,
  data: data[type],
});
