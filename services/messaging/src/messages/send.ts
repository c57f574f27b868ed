import { checkIdempotencyKey, replayOrMismatch, requestFingerprint } from "@switchboard/kit";
import type { messaging } from "@switchboard/proto";
import type { MessagingContext } from "../context.js";
import { messageSegments } from "../encoding/segments.js";
import type { Channel } from "../validation.js";
import { insertQueuedMessage } from "./queue-message.js";
import { messageColumns, toMessage, type MessageRow } from "./rows.js";
import { checkSendShape, defaultTtlSeconds, spellSendRequest } from "./send-checks.js";
import { loadSendFacts } from "./send-facts.js";
import {
  checkCarrierChannel,
  checkRecipient,
  checkSender,
  checkTemplate,
  render,
} from "./send-rules.js";

/**
 * SendMessage: every check of docs/api.md, each with its own problem, then one statement that
 * stores the message `queued` with its `message.queued` event. The event reaches the
 * dispatcher through the outbox relay, so a stored message is always sent (or expires); a
 * refused request stores nothing and sends nothing.
 */
export async function sendMessage(
  ctx: MessagingContext,
  sent: messaging.SendMessageRequest,
  idempotencyKey: string | undefined,
): Promise<messaging.Message> {
  const request = spellSendRequest(sent);
  const errors = checkSendShape(request);
  errors.throwIfAny();
  checkIdempotencyKey(idempotencyKey);
  const fingerprint = requestFingerprint("send-message", request);
  const [sender, facts] = await Promise.all([
    ctx.numbers.find(request.accountId, request.from),
    loadSendFacts(ctx.pool, request, idempotencyKey),
  ]);
  // A retry with the key gets the original message back before anything is checked again.
  if (facts.previous)
    return replayOrMismatch(facts.previous, fingerprint, toMessage(facts.previous));
  checkCarrierChannel(request, ctx.carrier.channels);
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

  const created = await insertQueuedMessage(ctx.pool, {
    account_id: request.accountId,
    // checkSendShape let only channels through.
    channel: request.channel as Channel,
    fallback: (request.fallback ?? null) as Channel | null,
    to_number: request.to,
    from_number: sender?.number ?? request.from,
    body,
    media_urls: request.mediaUrls,
    encoding,
    segments,
    template_id: template.id,
    template_version: template.version,
    consent_id: request.consentId,
    ttlSeconds: request.ttlSeconds ?? defaultTtlSeconds,
    idempotencyKey: idempotencyKey ?? null,
    fingerprint,
  });
  if (!created) {
    // A concurrent request with the same key won (the insert waited for its commit).
    const replay = await findByKey(ctx, request.accountId, idempotencyKey ?? "", fingerprint);
    if (!replay) throw new Error("the Idempotency-Key conflicted but no message holds it");
    return replay;
  }
  ctx.outbox.wake();
  return toMessage(created);
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
