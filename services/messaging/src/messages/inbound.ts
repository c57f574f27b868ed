import {
  e164Pattern,
  notFound,
  type PoolClient,
  requireAccount,
  withTransaction,
} from "@switchboard/kit";
import type { messaging } from "@switchboard/proto";
import { insertConsent } from "../consents/consents.js";
import { revokeWhere } from "../consents/revocation.js";
import { recognizeKeyword, type Keyword } from "../consents/keywords.js";
import type { MessagingContext } from "../context.js";
import { characterCount } from "../encoding/segments.js";
import { readSettings } from "../settings.js";
import { maxBodyCharacters } from "../templates/template-input.js";
import { sortChannels } from "../validation.js";
import { insertPlatformMessage } from "./insert.js";
import { messageColumns, toMessage, type MessageRow } from "./rows.js";

/**
 * An inbound message from the sandbox network to one of the account's numbers (the carriers'
 * own inbound traffic arrives through network-inbound.ts). It is stored
 * `received` (`message.received`); a keyword acts on it in the same transaction: STOP and its
 * synonyms revoke every consent the sender gave the account (`consent.revoked` each) and opt
 * them out; START/UNSTOP lifts the opt-out and grants a new consent (source `keyword`) for the
 * channels the opt-out revoked (SMS if none); HELP is answered with the account's help text.
 * Each keyword gets its confirmation, sent back from the number that received it.
 */
export async function receiveSandboxMessage(
  ctx: MessagingContext,
  request: messaging.ReceiveSandboxMessageRequest,
): Promise<messaging.Message> {
  if (!ctx.carrier.sandbox) {
    throw notFound("the sandbox endpoints (they exist only while the sandbox carrier is active)");
  }
  const errors = requireAccount(request.accountId);
  if (!e164Pattern.test(request.from))
    errors.add("#/from", "must be an E.164 number such as +14155550123");
  if (!e164Pattern.test(request.to))
    errors.add("#/to", "must be an E.164 number such as +14155550123");
  if (request.body === "") errors.add("#/body", "must not be empty");
  else if (characterCount(request.body) > maxBodyCharacters) {
    errors.add("#/body", `must be at most ${maxBodyCharacters} characters`);
  }
  errors.throwIfAny();
  const number = await ctx.numbers.find(request.accountId, request.to);
  if (!number) errors.add("#/to", `${request.to} is not a number of this account`);
  else if (!number.capabilities.includes("sms"))
    errors.add("#/to", `${number.number} has no sms capability`);
  errors.throwIfAny();
  const settings = await readSettings(ctx, request.accountId);
  const inbound = await withTransaction(ctx.pool, (client) =>
    storeInbound(ctx, client, {
      accountId: request.accountId,
      from: request.from,
      to: number?.number ?? request.to,
      body: request.body,
      settings,
    }),
  );
  ctx.outbox.wake();
  return toMessage(inbound);
}

/**
 * Stores an inbound message `received` on the caller's transaction and acts on its keyword;
 * the sandbox endpoint and the carriers' inbound traffic share it.
 */
export async function storeInbound(
  ctx: MessagingContext,
  client: PoolClient,
  message: {
    accountId: string;
    from: string;
    to: string;
    body: string;
    settings: messaging.Settings;
  },
): Promise<MessageRow> {
  const keyword = recognizeKeyword(message.body);
  const received = await insertPlatformMessage(ctx, client, {
    accountId: message.accountId,
    direction: "inbound",
    from: message.from,
    to: message.to,
    body: message.body,
    keyword: keyword?.keyword,
  });
  if (!keyword) return received;
  const reply = await actOnKeyword(ctx, client, received, keyword, message.settings);
  const { rows } = await client.query<MessageRow>(
    `UPDATE messaging.messages m SET auto_reply_id = $2 WHERE m.id = $1 RETURNING ${messageColumns}`,
    [received.id, reply.id],
  );
  return rows[0] as MessageRow;
}

async function actOnKeyword(
  ctx: MessagingContext,
  client: PoolClient,
  received: MessageRow,
  keyword: Keyword,
  settings: messaging.Settings,
): Promise<MessageRow> {
  const accountId = received.account_id;
  const sender = received.from_number;
  let reply = settings.helpText;
  if (keyword.action === "opt-out") {
    const revoked = await revokeWhere(
      ctx,
      client,
      "c.account_id = $1 AND c.phone_number = $2",
      [accountId, sender],
      {
        source: "keyword",
        keyword: keyword.keyword,
      },
    );
    const channels = sortChannels(revoked.flatMap((consent) => consent.channels));
    await client.query(
      `INSERT INTO messaging.opt_outs AS o (account_id, phone_number, keyword, revoked_channels)
       VALUES ($1, $2, $3, $4)
       ON CONFLICT (account_id, phone_number) DO UPDATE
         SET revoked_channels = ARRAY(SELECT DISTINCT unnest(o.revoked_channels || EXCLUDED.revoked_channels))`,
      [accountId, sender, keyword.keyword, channels],
    );
    reply = settings.stopReplyText;
  } else if (keyword.action === "opt-in") {
    const { rows } = await client.query<{ revoked_channels: string[] }>(
      "DELETE FROM messaging.opt_outs WHERE account_id = $1 AND phone_number = $2 RETURNING revoked_channels",
      [accountId, sender],
    );
    const channels = sortChannels(rows[0]?.revoked_channels ?? []);
    await insertConsent(ctx, client, {
      accountId,
      phoneNumber: sender,
      channels: channels.length > 0 ? channels : ["sms"],
      source: "keyword",
      evidence: {
        inbound_message_id: received.id,
        keyword: keyword.keyword,
        to: received.to_number,
      },
      capturedAt: received.created_at,
    });
    reply = settings.startReplyText;
  }
  return insertPlatformMessage(ctx, client, {
    accountId,
    direction: "outbound",
    from: received.to_number,
    to: sender,
    body: reply,
    inReplyTo: received.id,
  });
}
