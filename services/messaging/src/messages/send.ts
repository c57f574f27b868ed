import { newId, withTransaction } from "@switchboard/kit";
import type { messaging } from "@switchboard/proto";
import type { MessagingContext } from "../context.js";
import { messageSegments } from "../encoding/segments.js";
import { checkKeyLength, replayOrMismatch, requestFingerprint } from "../idempotency.js";
import { messageColumns, messageEventData, toMessage, type MessageRow } from "./rows.js";
import { checkSendShape, defaultTtlSeconds } from "./send-checks.js";
import { loadSendFacts } from "./send-facts.js";
import { checkRecipient, checkSender, checkTemplate, render } from "./send-rules.js";

/**
 * SendMessage: every check of API.md, each with its own problem, then one transaction that
 * stores the message `queued` with its `message.queued` event. The event reaches the
 * dispatcher through the outbox relay, so a stored message is always sent (or expires); a
 * refused request stores nothing and sends nothing.
 */
export async function sendMessage(
  ctx: MessagingContext,
  request: messaging.SendMessageRequest,
  idempotencyKey: string | undefined,
): Promise<messaging.Message> {
  const errors = checkSendShape(request);
  errors.throwIfAny();
  checkKeyLength(idempotencyKey);
  const fingerprint = requestFingerprint("send-message", request);
  const [sender, facts] = await Promise.all([
    ctx.numbers.find(request.accountId, request.from),
    loadSendFacts(ctx.pool, request, idempotencyKey),
  ]);
  // A retry with the key gets the original message back before anything is checked again.
  if (facts.previous)
    return replayOrMismatch(facts.previous, fingerprint, toMessage(facts.previous));
  checkSender(request, sender, errors);
  const template = checkTemplate(request, facts, errors);
  errors.throwIfAny();
  await ctx.signer.verify({
    templateId: template.id,
    name: template.name,
    version: template.version,
    channels: template.channels,
    body: template.body,
    contentSha256: template.content_sha256,
    signature: template.signature,
    kid: template.kid,
  });
  const body = render(request, template, errors);
  errors.throwIfAny();
  checkRecipient(request, facts);
  const { encoding, segments } = messageSegments(request.channel, body);

  const message = await withTransaction(
    ctx.pool,
    async (client): Promise<{ replay: messaging.Message } | { created: messaging.Message }> => {
      // The key is unique per account: of concurrent requests with one key, one inserts and
      // the others wait for its commit, insert nothing and answer with its message.
      const { rows } = await client.query<MessageRow>(
        `INSERT INTO messaging.messages AS m
           (id, account_id, direction, channel, fallback, status, to_number, from_number, body,
            media_urls, encoding, segments, template_id, template_version, consent_id, expires_at,
            idempotency_key, request_sha256)
         VALUES ($1, $2, 'outbound', $3, $4, 'queued', $5, $6, $7, $8, $9, $10, $11, $12, $13,
                 now() + make_interval(secs => $14), $15, $16)
         ON CONFLICT (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
         RETURNING ${messageColumns}`,
        [
          newId("msg"),
          request.accountId,
          request.channel,
          request.fallback ?? null,
          request.to,
          sender?.number ?? request.from,
          body,
          request.mediaUrls,
          encoding,
          segments,
          template.id,
          template.version,
          request.consentId,
          request.ttlSeconds ?? defaultTtlSeconds,
          idempotencyKey ?? null,
          fingerprint,
        ],
      );
      const row = rows[0];
      if (!row) {
        const replay = await findByKey(
          ctx,
          request.accountId,
          idempotencyKey ?? "",
          fingerprint,
          client,
        );
        if (!replay) throw new Error("the Idempotency-Key conflicted but no message holds it");
        return { replay };
      }
      await ctx.outbox.append(client, {
        type: "message.queued",
        accountId: row.account_id,
        resourceId: row.id,
        data: messageEventData(row),
      });
      return { created: toMessage(row) };
    },
  );
  if ("replay" in message) return message.replay;
  ctx.outbox.wake();
  return message.created;
}

async function findByKey(
  ctx: MessagingContext,
  accountId: string,
  key: string,
  fingerprint: string,
  db: Pick<MessagingContext["pool"], "query"> = ctx.pool,
): Promise<messaging.Message | undefined> {
  const { rows } = await db.query<MessageRow>(
    `SELECT ${messageColumns} FROM messaging.messages m WHERE m.account_id = $1 AND m.idempotency_key = $2`,
    [accountId, key],
  );
  const row = rows[0];
  return row ? replayOrMismatch(row, fingerprint, toMessage(row)) : undefined;
}
