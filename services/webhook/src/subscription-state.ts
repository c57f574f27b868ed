import { appendEvent, type Queryable } from "@switchboard/kit";
import type pg from "pg";
import { schema } from "./context.js";

/**
 * Transitions that end a subscription's pending work. When a subscription stops being active
 * (paused, disabled, deleted) its pending deliveries end `failed` with the reason as their
 * last error, in the same transaction; they stay replayable once it is active again.
 */
export async function failPendingDeliveries(
  db: Queryable,
  subscriptionId: string,
  reason: "subscription_paused" | "subscription_disabled" | "subscription_deleted",
): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE webhook.deliveries
        SET status = 'failed', failed_at = now(), next_attempt_at = NULL, last_error = $2
      WHERE subscription_id = $1 AND status = 'pending'`,
    [subscriptionId, reason],
  );
  return rowCount ?? 0;
}

/**
 * Disables an active subscription (`gone`: the receiver answered 410; `failing`: every attempt
 * failed for days) and records `webhook.subscription_disabled`, all in the caller's
 * transaction. False when it was no longer active (someone else got there first).
 */
export async function disableSubscription(
  client: pg.ClientBase,
  subscriptionId: string,
  reason: "gone" | "failing",
): Promise<boolean> {
  const { rows } = await client.query<{ account_id: string; url: string; disabled_at: Date }>(
    `UPDATE webhook.subscriptions
        SET status = 'disabled', disabled_reason = $2, disabled_at = now(), updated_at = now()
      WHERE id = $1 AND status = 'active' AND purpose = 'subscription'
      RETURNING account_id, url, disabled_at`,
    [subscriptionId, reason],
  );
  const row = rows[0];
  if (!row) return false;
  await failPendingDeliveries(client, subscriptionId, "subscription_disabled");
  await appendEvent(client, schema, {
    type: "webhook.subscription_disabled",
    accountId: row.account_id,
    resourceId: subscriptionId,
    data: {
      subscription_id: subscriptionId,
      url: row.url,
      reason,
      disabled_at: row.disabled_at.toISOString(),
    },
  });
  return true;
}
