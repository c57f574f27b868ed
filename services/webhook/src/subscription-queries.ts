import {
  cursorId,
  idPage,
  isId,
  notFound,
  pageLimit,
  type Pool,
  requireAccount,
} from "@switchboard/kit";
import type { webhook } from "@switchboard/proto";
import { subscriptionColumns, toSubscription, type SubscriptionRow } from "./rows.js";

export async function getSubscription(
  pool: Pool,
  request: webhook.GetSubscriptionRequest,
): Promise<webhook.Subscription> {
  requireAccount(request.accountId).throwIfAny();
  if (!isId(request.subscriptionId, "whs")) throw notFound("the subscription");
  const { rows } = await pool.query<SubscriptionRow>(
    `SELECT ${subscriptionColumns} FROM webhook.subscriptions s
      WHERE s.id = $1 AND s.account_id = $2 AND s.status <> 'deleted'
        AND s.purpose = 'subscription'`,
    [request.subscriptionId, request.accountId],
  );
  if (!rows[0]) throw notFound("the subscription");
  return toSubscription(rows[0]);
}

/** The account's subscriptions, newest first, keyset-paged on the (ULID) id. */
export async function listSubscriptions(
  pool: Pool,
  request: webhook.ListSubscriptionsRequest,
): Promise<webhook.ListSubscriptionsResponse> {
  const errors = requireAccount(request.accountId);
  const size = pageLimit(request.limit, errors);
  errors.throwIfAny();
  const binding = `subscriptions|${request.accountId}`;
  const after = cursorId(request.cursor, binding);
  const { rows } = await pool.query<SubscriptionRow>(
    `SELECT ${subscriptionColumns} FROM webhook.subscriptions s
      WHERE s.account_id = $1 AND s.status <> 'deleted' AND s.purpose = 'subscription'
        AND ($2::text IS NULL OR s.id < $2)
      ORDER BY s.id DESC LIMIT $3`,
    [request.accountId, after ?? null, size + 1],
  );
  const { items, nextCursor, hasMore } = idPage(rows, size, binding, toSubscription);
  return { subscriptions: items, nextCursor, hasMore };
}
