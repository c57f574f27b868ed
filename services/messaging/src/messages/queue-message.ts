import { countMessageStatus, injectTraceContext, newId, type Queryable } from "@switchboard/kit";
import { SCHEMA } from "../outbox.js";
import { messageColumns, messageEventData, type MessageRow } from "./rows.js";

/** A new outbound message, as the send stores it. */
export type NewMessage = Pick<
  MessageRow,
  | "account_id"
  | "channel"
  | "fallback"
  | "to_number"
  | "from_number"
  | "body"
  | "media_urls"
  | "encoding"
  | "segments"
  | "template_id"
  | "template_version"
  | "consent_id"
  | "status_callback"
> & { ttlSeconds: number; idempotencyKey: string | null; fingerprint: string };

/**
 * Stores a `queued` message and its `message.queued` event in ONE statement (so one round trip
 * and one commit, the send's whole hold on a connection). The event row is the kit's outbox
 * format (what appendEvent writes): a new resource's first event has sequence 1, and its
 * counter row starts at 1 so later appendEvent calls continue from there. The message's times
 * are the service's clock, so the event data is known before the insert.
 *
 * With an Idempotency-Key already used by the account nothing is inserted (the unique index
 * arbitrates concurrent requests: the losers wait for the winner's commit) and undefined is
 * returned.
 */
export async function insertQueuedMessage(
  db: Queryable,
  message: NewMessage,
): Promise<MessageRow | undefined> {
  const now = new Date();
  const row: MessageRow = {
    ...message,
    id: newId("msg"),
    direction: "outbound",
    channel_used: null,
    fallback_applied: false,
    status: "queued",
    expires_at: new Date(now.getTime() + message.ttlSeconds * 1_000),
    error_code: null,
    error_message: null,
    in_reply_to: null,
    keyword: null,
    auto_reply_id: null,
    attempts: 0,
    lease_until: null,
    provider_message_id: null,
    scheduled_at: null,
    request_fingerprint: message.fingerprint,
    created_at: now,
    updated_at: now,
    sent_at: null,
    delivered_at: null,
    read_at: null,
  };
  const trace = injectTraceContext();
  const { rows } = await db.query<MessageRow>(
    `WITH m AS (
       INSERT INTO ${SCHEMA}.messages AS m
         (id, account_id, direction, channel, fallback, status, to_number, from_number, body,
          media_urls, encoding, segments, template_id, template_version, consent_id, expires_at,
          idempotency_key, request_fingerprint, created_at, updated_at, status_callback)
       VALUES ($1, $2, 'outbound', $3, $4, 'queued', $5, $6, $7, $8::text[], $9, $10, $11, $12, $13, $14,
               $15, $16, $17, $17, $21::jsonb)
       ON CONFLICT (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
       RETURNING ${messageColumns}
     ), counter AS (
       INSERT INTO ${SCHEMA}.outbox_sequences (resource_id, last_sequence) SELECT id, 1 FROM m
     ), event AS (
       INSERT INTO ${SCHEMA}.outbox (id, type, account_id, resource_id, sequence, data, trace_carrier)
       SELECT $18, 'message.queued', m.account_id, m.id, 1, $19::jsonb, $20::jsonb FROM m
     )
     SELECT * FROM m`,
    [
      row.id,
      row.account_id,
      row.channel,
      row.fallback,
      row.to_number,
      row.from_number,
      row.body,
      row.media_urls,
      row.encoding,
      row.segments,
      row.template_id,
      row.template_version,
      row.consent_id,
      row.expires_at,
      message.idempotencyKey,
      message.fingerprint,
      now,
      newId("evt"),
      JSON.stringify(messageEventData(row)),
      trace ? JSON.stringify(trace) : null,
      row.status_callback ? JSON.stringify(row.status_callback) : null,
    ],
  );
  countMessageStatus("queued");
  return rows[0];
}
