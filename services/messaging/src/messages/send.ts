import {
  beginWith,
  checkIdempotencyKey,
  commitWith,
  FieldErrors,
  isDependencyUnavailable,
  replayOrMismatch,
  requestFingerprint,
  type Queryable,
} from "@switchboard/kit";
import type { messaging } from "@switchboard/proto";
import type { MessagingContext } from "../context.js";
import { messageSegments } from "../encoding/segments.js";
import type { Channel } from "../validation.js";
import { insertQueuedMessage } from "./queue-message.js";
import { messageColumns, toMessage, type MessageRow } from "./rows.js";
import type { SenderNumber } from "../sender-numbers.js";
import type { StoredTemplateVersion } from "../templates/signature.js";
import {
  checkSendShape,
  defaultTtlSeconds,
  spellSendRequest,
  type SendRequest,
} from "./send-checks.js";
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
 * stores the message `queued` with its `message.queued` event. The checks' reads and the insert
 * share one transaction (one commit per send) of two round trips: its BEGIN goes with the
 * reads, its COMMIT with the insert (inSendTransaction). The event reaches the dispatcher through the
 * outbox relay, so a stored message is always sent (or expires); a refused request stores
 * nothing and sends nothing.
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
  // What needs other connections comes first: the transaction waits on nothing but itself
  // (PGlite serves one transaction at a time, every connection waiting behind it).
  const sender = await ctx.numbers.find(request.accountId, request.from);
  for (;;) {
    const outcome = await inSendTransaction(ctx, (db) =>
      acceptSend(ctx, db, { request, sender, fingerprint, idempotencyKey }),
    );
    if (outcome.kind === "unverified") {
      // Verified outside the transaction (its key may have to be loaded), then sent again.
      await ctx.signer.verify(outcome.template);
      continue;
    }
    if (outcome.kind === "stored") ctx.outbox.wake();
    return outcome.message;
  }
}

/**
 * The send's statements, on one connection: `first` (the facts' read) goes with the BEGIN,
 * `last` (the insert) with the COMMIT — one round trip each, one commit — and `after` serves
 * what comes after the COMMIT (the look-up of a concurrent winner's message).
 */
interface SendStatements {
  first: Queryable;
  last: Queryable;
  after: Queryable;
}

/** Runs the send's work; rolls back unless its last statement committed. */
async function inSendTransaction<T>(
  ctx: MessagingContext,
  work: (db: SendStatements) => Promise<T>,
): Promise<T> {
  const client = await ctx.pool.connect();
  // Where the transaction stands (an object: the statements below move it).
  const tx: { state: "idle" | "open" | "committed" } = { state: "idle" };
  const db: SendStatements = {
    first: {
      query: (text: string, values?: unknown[]) => {
        tx.state = "open";
        return beginWith(client, text, values);
      },
    } as Queryable,
    last: {
      query: async (text: string, values?: unknown[]) => {
        const result = await commitWith(client, text, values);
        tx.state = "committed";
        return result;
      },
    } as Queryable,
    after: client,
  };
  try {
    const result = await work(db);
    if (tx.state === "open") await client.query("ROLLBACK");
    client.release();
    return result;
  } catch (error) {
    // A failed BEGIN-with-read or insert-with-COMMIT leaves an aborted transaction behind.
    if (tx.state === "open") await client.query("ROLLBACK").catch(() => undefined);
    client.release(isDependencyUnavailable(error) ? (error as Error) : undefined);
    throw error;
  }
}

type Acceptance =
  | { kind: "stored" | "replayed"; message: messaging.Message }
  /** The template version has not been verified in this process yet. */
  | { kind: "unverified"; template: StoredTemplateVersion };

/** The checks on the service's own tables and the insert, on the caller's transaction. */
async function acceptSend(
  ctx: MessagingContext,
  db: SendStatements,
  send: {
    request: SendRequest;
    sender: SenderNumber | undefined;
    fingerprint: string;
    idempotencyKey: string | undefined;
  },
): Promise<Acceptance> {
  const { request, sender, fingerprint, idempotencyKey } = send;
  const errors = new FieldErrors();
  const facts = await loadSendFacts(db.first, request, idempotencyKey);
  // A retry with the key gets the original message back before anything is checked again.
  if (facts.previous) {
    const message = replayOrMismatch(facts.previous, fingerprint, toMessage(facts.previous));
    return { kind: "replayed", message };
  }
  checkCarrierChannel(request, ctx.carrier.channels);
  checkSender(request, sender, errors);
  const template = checkTemplate(request, facts, errors);
  errors.throwIfAny();
  const stored: StoredTemplateVersion = {
    templateId: template.id,
    name: template.name,
    version: template.version,
    channels: template.channels,
    body: template.body,
    contentSha256: template.content_sha256,
    signature: template.signature,
    kid: template.kid,
  };
  if (!ctx.signer.remembers(stored)) return { kind: "unverified", template: stored };
  const body = render(request, template, errors);
  errors.throwIfAny();
  checkRecipient(request, facts);
  const { encoding, segments } = messageSegments(request.channel, body);

  const created = await insertQueuedMessage(db.last, {
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
    // Checked by the webhook service (its SSRF guard) before the request got here.
    status_callback: request.statusCallback
      ? { url: request.statusCallback.url, events: [...request.statusCallback.events] }
      : null,
    ttlSeconds: request.ttlSeconds ?? defaultTtlSeconds,
    idempotencyKey: idempotencyKey ?? null,
    fingerprint,
  });
  if (created) return { kind: "stored", message: toMessage(created) };
  // A concurrent request with the same key won (the insert waited for its commit).
  const replay = await findByKey(db.after, request.accountId, idempotencyKey ?? "", fingerprint);
  if (!replay) throw new Error("the Idempotency-Key conflicted but no message holds it");
  return { kind: "replayed", message: replay };
}

async function findByKey(
  db: Queryable,
  accountId: string,
  key: string,
  fingerprint: string,
): Promise<messaging.Message | undefined> {
  const { rows } = await db.query<MessageRow>(
    `SELECT ${messageColumns} FROM messaging.messages m WHERE m.account_id = $1 AND m.idempotency_key = $2`,
    [accountId, key],
  );
  const row = rows[0];
  return row ? replayOrMismatch(row, fingerprint, toMessage(row)) : undefined;
}
