import type { messaging } from "@switchboard/proto";
import { iso } from "../validation.js";

export interface MessageRow {
  id: string;
  account_id: string;
  direction: string;
  channel: string;
  channel_used: string | null;
  fallback: string | null;
  fallback_applied: boolean;
  status: string;
  to_number: string;
  from_number: string;
  body: string;
  media_urls: string[];
  encoding: string;
  segments: number;
  template_id: string | null;
  template_version: number | null;
  consent_id: string | null;
  expires_at: Date | null;
  error_code: string | null;
  error_message: string | null;
  in_reply_to: string | null;
  keyword: string | null;
  auto_reply_id: string | null;
  attempts: number;
  lease_until: Date | null;
  provider_message_id: string | null;
  scheduled_at: Date | null;
  request_fingerprint: string | null;
  created_at: Date;
  updated_at: Date;
  sent_at: Date | null;
  delivered_at: Date | null;
  read_at: Date | null;
}

export const messageColumns = `m.id, m.account_id, m.direction, m.channel, m.channel_used, m.fallback,
  m.fallback_applied, m.status, m.to_number, m.from_number, m.body, m.media_urls, m.encoding,
  m.segments, m.template_id, m.template_version, m.consent_id, m.expires_at, m.error_code,
  m.error_message, m.in_reply_to, m.keyword, m.auto_reply_id, m.attempts, m.lease_until,
  m.provider_message_id, m.scheduled_at, m.request_fingerprint, m.created_at, m.updated_at, m.sent_at,
  m.delivered_at, m.read_at`;

export const toMessage = (row: MessageRow): messaging.Message => ({
  id: row.id,
  direction: row.direction,
  channel: row.channel,
  channelUsed: row.channel_used ?? undefined,
  fallback: row.fallback ?? undefined,
  fallbackApplied: row.fallback_applied,
  status: row.status,
  to: row.to_number,
  from: row.from_number,
  body: row.body,
  mediaUrls: row.media_urls,
  encoding: row.encoding,
  segments: row.segments,
  templateId: row.template_id ?? undefined,
  templateVersion: row.template_version ?? undefined,
  consentId: row.consent_id ?? undefined,
  expiresAt: iso(row.expires_at),
  errorCode: row.error_code ?? undefined,
  errorMessage: row.error_message ?? undefined,
  inReplyTo: row.in_reply_to ?? undefined,
  keyword: row.keyword ?? undefined,
  autoReplyId: row.auto_reply_id ?? undefined,
  createdAt: row.created_at.toISOString(),
  updatedAt: row.updated_at.toISOString(),
  sentAt: iso(row.sent_at),
  deliveredAt: iso(row.delivered_at),
  readAt: iso(row.read_at),
});

/**
 * The webhook `data` of message events: the message without its body (the account wrote it;
 * bodies stay out of queues and event stores), except for inbound messages, whose body is the
 * news. `message.sent` adds the usage fact: quantity = segments.
 */
export function messageEventData(row: MessageRow): Record<string, unknown> {
  const m = toMessage(row);
  return {
    id: m.id,
    message_id: m.id,
    direction: m.direction,
    status: m.status,
    channel: m.channel,
    channel_used: m.channelUsed ?? null,
    fallback: m.fallback ?? null,
    fallback_applied: m.fallbackApplied,
    to: m.to,
    from: m.from,
    encoding: m.encoding,
    segments: m.segments,
    media_count: m.mediaUrls.length,
    template_id: m.templateId ?? null,
    template_version: m.templateVersion ?? null,
    consent_id: m.consentId ?? null,
    error_code: m.errorCode ?? null,
    error_message: m.errorMessage ?? null,
    in_reply_to: m.inReplyTo ?? null,
    ...(m.direction === "inbound" ? { body: m.body, keyword: m.keyword ?? null } : {}),
    ...(m.status === "sent" ? { quantity: m.segments, unit: "segment" } : {}),
    created_at: m.createdAt,
    updated_at: m.updatedAt,
  };
}
