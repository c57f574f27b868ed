import { type PoolClient, withTransaction } from "@switchboard/kit";
import type { DeliveryReceipt } from "../carrier/carrier.js";
import type { MessagingContext } from "../context.js";
import { transition } from "../messages/transitions.js";

/** Thrown while a receipt names a provider id not yet recorded (the carrier retries it). */
export class UnknownReceiptError extends Error {
  override readonly name = "UnknownReceiptError";
}

const errorMessages: Record<string, string> = {
  undelivered: "the network could not deliver the message to the handset",
  failed: "the network reported the message failed",
  expired: "the network gave up on the message when its validity period ended",
};

/**
 * Applies a delivery (or read) receipt to the message the carrier's id names. The guarded
 * transition ignores a receipt that no longer fits (a duplicate, or one overtaken by a
 * terminal state), so receipts may arrive twice and out of order.
 *
 * The message is looked up and locked first, and only then moved: a receipt that overtakes the
 * submit worker's `sent` commit then either finds no message (and is retried) or finds it
 * committed. Moving first and looking up after would lose it when that commit lands between
 * the two statements: the move misses the row, the look-up sees it, and the receipt would pass
 * for one that no longer fits.
 */
export async function applyReceipt(ctx: MessagingContext, receipt: DeliveryReceipt): Promise<void> {
  const applied = await withTransaction(ctx.pool, (client) => applyReceiptOn(ctx, client, receipt));
  if (applied) ctx.outbox.wake();
}

/** applyReceipt on the caller's transaction; true when the receipt moved the message. */
export async function applyReceiptOn(
  ctx: MessagingContext,
  client: PoolClient,
  receipt: DeliveryReceipt,
): Promise<boolean> {
  const failure =
    receipt.status in errorMessages
      ? {
          error_code: receipt.errorCode ?? receipt.status,
          error_message: errorMessages[receipt.status] ?? null,
        }
      : {};
  const { rows } = await client.query<{ id: string }>(
    "SELECT id FROM messaging.messages WHERE provider_message_id = $1 FOR UPDATE",
    [receipt.providerMessageId],
  );
  const message = rows[0];
  if (!message) {
    if (await isLaterPart(client, receipt.providerMessageId)) return false;
    throw new UnknownReceiptError(`no message has provider id ${receipt.providerMessageId} yet`);
  }
  return (await transition(client, message.id, receipt.status, failure)) !== undefined;
}

/**
 * A receipt of a concatenated message's second or later part: acknowledged and not applied,
 * since the first part's receipt decides the message's state (docs/api.md "Carriers").
 */
async function isLaterPart(client: PoolClient, providerPartId: string): Promise<boolean> {
  const { rowCount } = await client.query(
    "SELECT 1 FROM messaging.message_parts WHERE provider_part_id = $1",
    [providerPartId],
  );
  return (rowCount ?? 0) > 0;
}
