import { withTransaction } from "@switchboard/kit";
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
};

/**
 * Applies a delivery (or read) receipt to the message the carrier's id names. The guarded
 * transition ignores a receipt that no longer fits (a duplicate, or one overtaken by a
 * terminal state), so receipts may arrive twice and out of order.
 */
export async function applyReceipt(ctx: MessagingContext, receipt: DeliveryReceipt): Promise<void> {
  const failure =
    receipt.status === "undelivered" || receipt.status === "failed"
      ? {
          error_code: receipt.errorCode ?? receipt.status,
          error_message: errorMessages[receipt.status] ?? null,
        }
      : {};
  const applied = await withTransaction(ctx.pool, async (client) => {
    const row = await transition(
      client,
      ctx.outbox,
      receipt.providerMessageId,
      receipt.status,
      failure,
      "provider_message_id",
    );
    if (row) return row;
    const known = await client.query(
      "SELECT 1 FROM messaging.messages WHERE provider_message_id = $1",
      [receipt.providerMessageId],
    );
    if (known.rowCount === 0) {
      throw new UnknownReceiptError(`no message has provider id ${receipt.providerMessageId} yet`);
    }
    return undefined;
  });
  if (applied) ctx.outbox.wake();
}
