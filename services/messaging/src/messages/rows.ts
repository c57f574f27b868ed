import { isoTimestampSql } from "@switchboard/kit";
import { wire, type messaging } from "@switchboard/proto";
import { iso } from "../validation.js";

export interface MessageRow {
  id: string;
  account_id: string;
  direction: wire.MessageDirectionValue;
  channel: wire.ChannelValue;
  channel_used: wire.ChannelValue | null;
  fallback: wire.ChannelValue | null;
  fallback_applied: boolean;
  status: wire.MessageStatusValue;
  to_number: string;
  from_number: string;
  body: string;
  media_urls: string[];
  encoding: wire.EncodingValue;
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
  status_callback: { url: string; events: string[] } | null;
}

export const messageColumns = `m.id, m.account_id, m.direction, m.channel, m.channel_used, m.fallback,
  m.fallback_applied, m.status, m.to_number, m.from_number, m.body, m.media_urls, m.encoding,
  m.segments, m.template_id, m.template_version, m.consent_id, m.expires_at, m.error_code,
  m.error_message, m.in_reply_to, m.keyword, m.auto_reply_id, m.attempts, m.lease_until,
  m.provider_message_id, m.scheduled_at, m.request_fingerprint, m.created_at, m.updated_at, m.sent_at,
  m.delivered_at, m.read_at, m.status_callback`;

export const toMessage = (row: MessageRow): messaging.Message => ({
  id: row.id,
  direction: wire.messageDirection.of(row.direction),
  channel: wire.channel.of(row.channel),
  channelUsed: row.channel_used ? wire.channel.of(row.channel_used) : undefined,
  fallback: row.fallback ? wire.channel.of(row.fallback) : undefined,
  fallbackApplied: row.fallback_applied,
  status: wire.messageStatus.of(row.status),
  to: row.to_number,
  from: row.from_number,
  body: row.body,
  mediaUrls: row.media_urls,
  encoding: wire.encoding.of(row.encoding),
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
  statusCallback: row.status_callback ?? undefined,
});

/**
 * The webhook `data` of message events: the message without its body (the account wrote it;
 * bodies stay out of queues and event stores), except for inbound messages, whose body is the
 * news. `message.sent` adds the usage fact: quantity = segments.
 */
export function messageEventData(row: MessageRow): Record<string, unknown> {
  return {
    id: row.id,
    message_id: row.id,
    direction: row.direction,
    status: row.status,
    channel: row.channel,
    channel_used: row.channel_used,
    fallback: row.fallback,
    fallback_applied: row.fallback_applied,
    to: row.to_number,
    from: row.from_number,
    encoding: row.encoding,
    segments: row.segments,
    media_count: row.media_urls.length,
    template_id: row.template_id,
    template_version: row.template_version,
    consent_id: row.consent_id,
    error_code: row.error_code,
    error_message: row.error_message,
    in_reply_to: row.in_reply_to,
    ...(row.direction === "inbound" ? { body: row.body, keyword: row.keyword } : {}),
    ...(row.status === "sent" ? { quantity: row.segments, unit: "segment" } : {}),
    status_callback: row.status_callback ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/**
 * messageEventData in SQL, over a row of messaging.messages named `alias` (the RETURNING row of
 * a transition's CTE): the same JSON, so a transition and its event are one statement
 * (transitions.ts). test/message-event-data.integration.test.ts holds the two to the same
 * output.
 */
export function messageEventDataSql(alias: string): string {
  const m = (column: string) => `${alias}.${column}`;
  return `(jsonb_build_object(
    'id', ${m("id")}, 'message_id', ${m("id")}, 'direction', ${m("direction")},
    'status', ${m("status")}, 'channel', ${m("channel")}, 'channel_used', ${m("channel_used")},
    'fallback', ${m("fallback")}, 'fallback_applied', ${m("fallback_applied")},
    'to', ${m("to_number")}, 'from', ${m("from_number")}, 'encoding', ${m("encoding")},
    'segments', ${m("segments")}, 'media_count', cardinality(${m("media_urls")}),
    'template_id', ${m("template_id")}, 'template_version', ${m("template_version")},
    'consent_id', ${m("consent_id")}, 'error_code', ${m("error_code")},
    'error_message', ${m("error_message")}, 'in_reply_to', ${m("in_reply_to")},
    'status_callback', ${m("status_callback")},
    'created_at', ${isoTimestampSql(m("created_at"))}, 'updated_at', ${isoTimestampSql(m("updated_at"))})
    || CASE WHEN ${m("direction")} = 'inbound'
         THEN jsonb_build_object('body', ${m("body")}, 'keyword', ${m("keyword")}) ELSE '{}'::jsonb END
    || CASE WHEN ${m("status")} = 'sent'
         THEN jsonb_build_object('quantity', ${m("segments")}, 'unit', 'segment') ELSE '{}'::jsonb END)`;
}
