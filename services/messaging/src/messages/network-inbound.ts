import { type PoolClient, withTransaction } from "@switchboard/kit";
import type { InboundOutcome, InboundPart } from "../carrier/carrier.js";
import type { MessagingContext } from "../context.js";
import { readSettings } from "../settings.js";
import { storeInbound } from "./inbound.js";

/**
 * A message the carrier's network delivered to one of the platform's numbers (an SMPP
 * mobile-originated deliver_sm): stored `received` under the account the number is assigned
 * to, keywords acted on as for the sandbox. A part of a concatenated message waits in
 * `inbound_parts` until its last part arrives, in any order and on any replica; the part that
 * completes it stores the whole message in the same transaction. Resolves once committed.
 */
export async function receiveNetworkPart(
  ctx: MessagingContext,
  part: InboundPart,
): Promise<InboundOutcome> {
  const owner = await ctx.numbers.owner(part.to);
  if (!owner || !owner.number.capabilities.includes("sms")) return "unknown-number";
  const settings = await readSettings(ctx, owner.accountId);
  const outcome = await withTransaction(ctx.pool, async (client) => {
    const body = part.concat ? await collectPart(client, part, part.concat) : part.text;
    if (body === undefined) return "part-stored" as const;
    await storeInbound(ctx, client, {
      accountId: owner.accountId,
      from: part.from,
      to: owner.number.number,
      body,
      settings,
    });
    return "received" as const;
  });
  if (outcome === "received") ctx.outbox.wake();
  return outcome;
}

/**
 * Keeps one part and returns the whole text once every part is in (deleting the parts), else
 * undefined. The transaction-scoped advisory lock on the message's key serialises its parts,
 * so two last parts arriving at once on two binds cannot both see the message incomplete.
 */
async function collectPart(
  client: PoolClient,
  part: InboundPart,
  concat: NonNullable<InboundPart["concat"]>,
): Promise<string | undefined> {
  const key = [part.from, part.to, concat.reference, concat.total];
  await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [key.join(" ")]);
  await client.query(
    `INSERT INTO messaging.inbound_parts (from_number, to_number, reference, total, sequence, body)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
    [...key, concat.sequence, part.text],
  );
  const { rows } = await client.query<{ body: string }>(
    `SELECT body FROM messaging.inbound_parts
      WHERE from_number = $1 AND to_number = $2 AND reference = $3 AND total = $4
      ORDER BY sequence`,
    key,
  );
  if (rows.length < concat.total) return undefined;
  await client.query(
    `DELETE FROM messaging.inbound_parts
      WHERE from_number = $1 AND to_number = $2 AND reference = $3 AND total = $4`,
    key,
  );
  return rows.map((row) => row.body).join("");
}
