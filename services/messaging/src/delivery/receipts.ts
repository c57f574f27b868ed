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
 * The receipt first moves the message it names in one statement, which is all it takes when it
 * fits. When that moved nothing, the message is looked up and locked, and only then moved: a
 * receipt that overtakes the submit worker's `sent` commit then either finds no message (and
 * is retried) or finds it committed. Taking a miss of the move for a receipt that no longer
 * fits, without that look-up, would lose it when the commit lands between the two: the move
 * missed the row, yet it now fits.
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
  const providerMessageId = receipt.providerMessageId;
  if (await transition(client, { providerMessageId }, receipt.status, failure)) return true;
  const { rows } = await client.query<{ id: string }>(
    "SELECT id FROM messaging.messages WHERE provider_message_id = $1 FOR UPDATE",
    [providerMessageId],
  );
  const message = rows[0];
  if (!message) {
    if (await isLaterPart(client, providerMessageId)) return false;
    throw new UnknownReceiptError(`no message has provider id ${providerMessageId} yet`);
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
