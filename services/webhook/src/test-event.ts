import {
  DomainError,
  injectTraceContext,
  newId,
  requireAccount,
  withTransaction,
} from "@switchboard/kit";
import type { webhook } from "@switchboard/proto";
import type { WebhookContext } from "./context.js";
import { deliveryColumns, toDelivery, type DeliveryRow } from "./rows.js";
import { lockSubscription } from "./subscriptions.js";

/**
 * `webhook.test`: an event made for one subscription and delivered to it alone, through the
 * same queue, signing and retries as any other. Its sequence counts on the subscription, like
 * the subscription's other events. One Idempotency-Key → one test delivery.
 */
export async function testSubscription(
  ctx: WebhookContext,
  request: webhook.TestSubscriptionRequest,
  idempotencyKey: string | undefined,
): Promise<webhook.Delivery> {
  requireAccount(request.accountId).throwIfAny();
  const created = await withTransaction(ctx.pool, async (client) => {
    const subscription = await lockSubscription(client, request.accountId, request.subscriptionId);
    if (idempotencyKey !== undefined) {
      const { rows } = await client.query<DeliveryRow & { dispatch: number }>(
        `SELECT ${deliveryColumns}, d.dispatch FROM webhook.deliveries d
          WHERE d.account_id = $1 AND d.idempotency_key = $2`,
        [request.accountId, idempotencyKey],
      );
      if (rows[0] && rows[0].subscription_id !== subscription.id) {
        throw new DomainError(
          "idempotency-mismatch",
          "the Idempotency-Key was already used to test another subscription",
        );
      }
      if (rows[0]) return { row: rows[0], fresh: false, trace: undefined };
    }
    if (subscription.status !== "active") {
      throw new DomainError(
        "invalid-state",
        `the subscription is ${subscription.status}; set its status to active to test it`,
        { extensions: { status: subscription.status } },
      );
    }
    const { rows: sequence } = await client.query<{ last_sequence: number }>(
      `INSERT INTO webhook.outbox_sequences AS q (resource_id, last_sequence) VALUES ($1, 1)
       ON CONFLICT (resource_id) DO UPDATE SET last_sequence = q.last_sequence + 1
       RETURNING last_sequence`,
      [subscription.id],
    );
    const eventId = newId("evt");
    const payload = JSON.stringify({
      id: eventId,
      type: "webhook.test",
      timestamp: new Date().toISOString(),
      account_id: request.accountId,
      sequence: Number(sequence[0]!.last_sequence),
      data: {
        subscription_id: subscription.id,
        message: "A test event from Switchboard: your endpoint receives and verifies webhooks.",
      },
    });
    const trace = injectTraceContext();
    const { rows } = await client.query<DeliveryRow & { dispatch: number }>(
      `INSERT INTO webhook.deliveries AS d
         (id, account_id, subscription_id, event_id, event_type, payload, trace_carrier, status,
          next_attempt_at, idempotency_key)
       VALUES ($1, $2, $3, $4, 'webhook.test', $5, $6, 'pending', now(), $7)
       RETURNING ${deliveryColumns}, d.dispatch`,
      [
        newId("wdl"),
        request.accountId,
        subscription.id,
        eventId,
        payload,
        trace ? JSON.stringify(trace) : null,
        idempotencyKey ?? null,
      ],
    );
    return { row: rows[0]!, fresh: true, trace };
  });
  if (created.fresh) {
    await ctx.dispatcher.dispatch({
      id: created.row.id,
      dispatch: created.row.dispatch,
      eventType: "webhook.test",
      trace: created.trace,
    });
  }
  return toDelivery(created.row);
}
