import { countMessageStatus, newId, type PoolClient } from "@switchboard/kit";
import type { MessagingContext } from "../context.js";
import { messageSegments } from "../encoding/segments.js";
import { messageColumns, messageEventData, type MessageRow } from "./rows.js";
import { defaultTtlSeconds } from "./send-checks.js";

/**
 * Stores a platform-made message on the caller's transaction with its event: an inbound
 * message (`received`) or an auto-reply to one (`queued`, sent like any message but without
 * template or consent: a keyword's confirmation and HELP's answer are owed to the sender).
 */
export async function insertPlatformMessage(
  ctx: MessagingContext,
  client: PoolClient,
  message: {
    accountId: string;
    direction: "inbound" | "outbound";
    from: string;
    to: string;
    body: string;
    keyword?: string | undefined;
    inReplyTo?: string | undefined;
  },
): Promise<MessageRow> {
  const inbound = message.direction === "inbound";
  const { encoding, segments } = messageSegments("sms", message.body);
  const { rows } = await client.query<MessageRow>(
    `INSERT INTO messaging.messages AS m
       (id, account_id, direction, channel, channel_used, status, to_number, from_number, body,
        encoding, segments, keyword, in_reply_to, expires_at)
     VALUES ($1, $2, $3, 'sms', $4, $5, $6, $7, $8, $9, $10, $11, $12,
             CASE WHEN $13::int IS NULL THEN NULL ELSE now() + make_interval(secs => $13::int) END)
     RETURNING ${messageColumns}`,
    [
      newId("msg"),
      message.accountId,
      message.direction,
      inbound ? "sms" : null,
      inbound ? "received" : "queued",
      message.to,
      message.from,
      message.body,
      encoding,
      segments,
      message.keyword ?? null,
      message.inReplyTo ?? null,
      inbound ? null : defaultTtlSeconds,
    ],
  );
  const row = rows[0] as MessageRow;
  countMessageStatus(row.status);
  await ctx.outbox.append(client, {
    type: inbound ? "message.received" : "message.queued",
    accountId: row.account_id,
    resourceId: row.id,
    data: messageEventData(row),
  });
  return row;
}
