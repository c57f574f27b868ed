/**
 * The one story every example of the reference tells (operations, components and the webhooks
 * section alike): account acct_01jd2k8w7c3q9v0m5n6p7r8s9t holds and assigns +14155550123 to
 * the seat "front desk", whose agent alice calls +14155550188 from it; the account texts
 * +14155550177 with the template "appointment-reminder" under a consent. The ids are fixed so
 * one example can refer to another, and the code samples' test maps each of them to a live one.
 */

/** The story's id of a resource with this prefix: `<prefix>_<ULID>`. */
export const storyId = (prefix: string) => `${prefix}_01jd2k8w7c3q9v0m5n6p7r8s9t`;

export const story = {
  account: "acct_01jd2k8w7c3q9v0m5n6p7r8s9t",
  ours: "+14155550123",
  callee: "+14155550188",
  recipient: "+14155550177",
  numberId: storyId("num"),
  holdId: storyId("hld"),
  seatId: storyId("seat"),
  agentId: storyId("agt"),
  agent: "alice",
  routeId: storyId("rte"),
  callId: storyId("call"),
  messageId: storyId("msg"),
  templateId: storyId("tpl"),
  consentId: storyId("cns"),
  subscriptionId: storyId("whs"),
  deliveryId: storyId("wdl"),
  eventId: storyId("evt"),
  usageId: storyId("use"),
  requestId: storyId("req"),
  clientId: "cli_support_desk",
  tokenId: storyId("tok"),
  createdAt: "2026-11-24T21:45:44.123Z",
  statusCallbackUrl: "https://example.com/calls/status",
  webhookUrl: "https://example.com/hooks",
  passport:
    "eyJhbGciOiJFUzI1NiIsInBwdCI6InNoYWtlbiIsInR5cCI6InBhc3Nwb3J0IiwieDV1IjoiaHR0cHM6Ly9hcGkuc3dpdGNoYm9hcmQudGVzdC8ud2VsbC1rbm93bi9zdGlyLXNoYWtlbi9jZXJ0LnBlbSJ9.eyJhdHRlc3QiOiJBIiwiZGVzdCI6eyJ0biI6WyIxNDE1NTU1MDE4OCJdfSwiaWF0IjoxNzk1OTk3NTYwLCJvcmlnIjp7InRuIjoiMTQxNTU1NTAxMjMifSwib3JpZ2lkIjoiNGY2YzE2YjItM2Q5ZS00YTdiLThjMWQtMmU1ZjZhN2I4YzlkIn0.MEUCIQDx…",
  nextCursor: "WzIsIkVuR3VYbjNxIiwiY2FsbF8wMWpkMmtiMHExcjJzM3Q0djV3Nng3eTh6OSJd.c2VYbDlHcE1rUXc4",
} as const;

/** The story's outbound call at each stage: queued when placed, then answered, then completed. */
export const storyCall = (stage: "queued" | "in_progress" | "completed" = "completed") => ({
  id: story.callId,
  direction: "outbound",
  status: stage,
  to: story.callee,
  from: story.ours,
  agent: story.agent,
  seat_id: story.seatId,
  route_id: null,
  stir_shaken: { attestation: "A", identity: story.passport },
  client_state: "order-4711",
  timeout_seconds: 30,
  time_limit_seconds: 14400,
  hangup_cause: stage === "completed" ? "normal_clearing" : null,
  hangup_source: stage === "completed" ? "callee" : null,
  sip_code: stage === "completed" ? 200 : null,
  early_media: false,
  created_at: "2026-11-24T21:46:00.000Z",
  answered_at: stage === "queued" ? null : "2026-11-24T21:46:04.000Z",
  ended_at: stage === "completed" ? "2026-11-24T21:47:39.000Z" : null,
  duration_seconds: stage === "completed" ? 95 : null,
  status_callback: { url: story.statusCallbackUrl, events: [] },
});

/** The story's inbound call: the callee calls back the account's number, which a route rings. */
export const storyInboundCall = (stage: "ringing" | "in_progress") => ({
  ...storyCall(stage === "ringing" ? "queued" : "in_progress"),
  direction: "inbound",
  status: stage,
  to: story.ours,
  from: story.callee,
  agent: stage === "ringing" ? null : story.agent,
  route_id: story.routeId,
  stir_shaken: null,
  client_state: null,
  status_callback: null,
});

/** The story's text to the recipient, delivered. */
export const storyMessage = {
  id: story.messageId,
  direction: "outbound",
  channel: "sms",
  channel_used: "sms",
  fallback: null,
  fallback_applied: false,
  status: "delivered",
  to: story.recipient,
  from: story.ours,
  body: "Hi Dana, your appointment is on Tuesday at 10:00. Reply STOP to opt out.",
  media_urls: [],
  encoding: "GSM-7",
  segments: 1,
  template_id: story.templateId,
  template_version: 1,
  consent_id: story.consentId,
  expires_at: "2026-11-25T07:50:00.000Z",
  error_code: null,
  error_message: null,
  in_reply_to: null,
  keyword: null,
  auto_reply_id: null,
  created_at: "2026-11-24T21:50:00.000Z",
  updated_at: "2026-11-24T21:50:03.000Z",
  sent_at: "2026-11-24T21:50:01.000Z",
  delivered_at: "2026-11-24T21:50:03.000Z",
  read_at: null,
  status_callback: null,
};

/** The recipient's consent to texts, given on a web form. */
export const storyConsent = {
  id: story.consentId,
  phone_number: story.recipient,
  channels: ["sms"],
  source: "web_form",
  evidence: { form_url: "https://example.com/reminders/signup", ip: "203.0.113.7" },
  captured_at: "2026-11-20T10:00:00.000Z",
  status: "granted",
  created_at: "2026-11-20T10:00:01.000Z",
  revoked_at: null,
  revocation_source: null,
  revocation_keyword: null,
};

/** The hold on the story's number, still active. */
export const storyHold = {
  id: story.holdId,
  number_id: story.numberId,
  number: story.ours,
  status: "active",
  expires_at: "2026-11-24T21:55:44.123Z",
  created_at: story.createdAt,
  released_at: null,
  converted_at: null,
};

/** The account's webhook subscription. */
export const storySubscription = {
  id: story.subscriptionId,
  url: story.webhookUrl,
  events: ["call.*", "message.delivered"],
  description: "Order desk: call and delivery updates",
  status: "active",
  disabled_reason: null,
  previous_secret_expires_at: null,
  created_at: "2026-11-24T21:40:00.000Z",
  updated_at: "2026-11-24T21:40:00.000Z",
};

/** The delivery of the story's call.completed to that subscription, on its first attempt. */
export const storyDelivery = {
  id: story.deliveryId,
  subscription_id: story.subscriptionId,
  event_id: story.eventId,
  event_type: "call.completed",
  status: "delivered",
  attempts: 1,
  next_attempt_at: null,
  last_attempt_at: "2026-11-24T21:47:39.210Z",
  last_status_code: 200,
  last_error: null,
  delivered_at: "2026-11-24T21:47:39.260Z",
  failed_at: null,
  created_at: "2026-11-24T21:47:39.180Z",
};

/** The story's number, assigned to the account and to the seat "front desk". */
export const storyNumber = {
  id: story.numberId,
  number: story.ours,
  country: "US",
  region: "CA",
  locality: "San Francisco",
  area_code: "415",
  type: "local",
  capabilities: ["voice", "sms", "mms"],
  status: "assigned",
  seat_id: story.seatId,
  assigned_at: "2026-11-24T21:45:51.402Z",
};

/** The story's number as a search shows it, before the account held it. */
export const storyAvailableNumber = {
  ...storyNumber,
  status: "available",
  seat_id: null,
  assigned_at: null,
};

/** The template of the story's reminders, at version 1. */
export const storyTemplate = {
  id: story.templateId,
  name: "appointment-reminder",
  version: 1,
  latest_version: 1,
  channels: ["sms"],
  body: "Hi {{name}}, your appointment is on {{day}} at {{time}}. Reply STOP to opt out.",
  variables: ["name", "day", "time"],
  status: "approved",
  content_sha256: "9b1c6e0f2d4a8b7c5e3f1a0d9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b",
  signature:
    "eyJhbGciOiJFZERTQSIsImtpZCI6InRwbC1rZXktMSJ9..3q2-7wT0Yb0m6X1hP9sF4kLrN8cVzQ5aJ2uD7eG1iB0oH3yR6tW9xK4mE2nC8pS5vA1fZ0gU7jL3dQ6bY9hTCg",
  kid: "tpl-key-1",
  created_at: "2026-11-24T21:30:00.000Z",
  approved_at: "2026-11-24T21:30:00.000Z",
};

/** A self-signed ES256 certificate such as GET /.well-known/stir-shaken/cert.pem serves. */
export const storyCertificate =
  "-----BEGIN CERTIFICATE-----\nMIIBmTCCAT+gAwIBAgIUOFIt26bFOaiAHY1zT10j00FknqYwCgYIKoZIzj0EAwIw\nIjEgMB4GA1UEAwwXU3dpdGNoYm9hcmQgU1RJUi1TSEFLRU4wHhcNMjYxMTI3MTQz\nMzQ5WhcNMjcxMTI3MTQzMzQ5WjAiMSAwHgYDVQQDDBdTd2l0Y2hib2FyZCBTVElS\nLVNIQUtFTjBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABL7hOmHH2+1mhATY0h0D\nBHYnYA7xe7mpea7Ii/NjnRozgDfjBHk0ayCU/1Rc2CcnVnv9yWzlGjnQegoIKfg/\nbaSjUzBRMB0GA1UdDgQWBBSpe5ViOQNrTwhuvdVAHNlVe+WQWzAfBgNVHSMEGDAW\ngBSpe5ViOQNrTwhuvdVAHNlVe+WQWzAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49\nBAMCA0gAMEUCIFFFWMnGahZV9guAGuzzC+05B14Dkg/c1wyPriRxmJyTAiEAhclp\nlk/xMJqsgVQr/gVnaTwzwEnM3QQRbyVniTTXYc8=\n-----END CERTIFICATE-----\n";
