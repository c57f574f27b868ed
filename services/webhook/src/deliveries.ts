import {
  createdOrderBinding,
  DomainError,
  isId,
  listByCreation,
  notFound,
  pageLimit,
  type Pool,
  readCreatedOrder,
  requireAccount,
  withTransaction,
} from "@switchboard/kit";
import { wire, type webhook } from "@switchboard/proto";
import type { WebhookContext } from "./context.js";
import { deliveryColumns, toDelivery, type AttemptRow, type DeliveryRow } from "./rows.js";

const maxAttemptLog = 100;

/**
 * A subscription's deliveries, newest first by creation (then id) unless `oldest_first`,
 * optionally within a creation window; the subscription must be the account's.
 */
export async function listDeliveries(
  pool: Pool,
  request: webhook.ListDeliveriesRequest,
): Promise<webhook.ListDeliveriesResponse> {
  const errors = requireAccount(request.accountId);
  const size = pageLimit(request.limit, errors);
  const status = request.status && wire.deliveryStatus.spell(request.status);
  if (request.status !== undefined && status === undefined) {
    errors.add("#/query/status", `must be one of ${wire.deliveryStatus.values.join(", ")}`);
  }
  const resourceId = request.resourceId;
  if (resourceId !== undefined && !/^(call|msg)_[0-9a-z]{26}$/.test(resourceId)) {
    errors.add("#/query/resource_id", "must be a call or message id (call_…, msg_…)");
  }
  const order = readCreatedOrder(request, errors);
  errors.throwIfAny();
  if (!isId(request.subscriptionId, "whs")) throw notFound("the subscription");
  const owned = await pool.query(
    `SELECT 1 FROM webhook.subscriptions WHERE id = $1 AND account_id = $2 AND status <> 'deleted'`,
    [request.subscriptionId, request.accountId],
  );
  if (owned.rowCount === 0) throw notFound("the subscription");
  const binding = [
    "deliveries",
    request.accountId,
    request.subscriptionId,
    status ?? "",
    resourceId ?? "",
    ...createdOrderBinding(order),
  ].join("|");
  const { items, nextCursor, hasMore } = await listByCreation<DeliveryRow, webhook.Delivery>(
    pool,
    {
      from: "webhook.deliveries d",
      alias: "d",
      columns: deliveryColumns,
      filters: {
        "d.subscription_id": request.subscriptionId,
        "d.status": status,
        "d.resource_id": resourceId,
      },
      order,
      cursor: request.cursor,
      binding,
      limit: size,
    },
    (row) => toDelivery(row),
  );
  return { deliveries: items, nextCursor, hasMore };
}

/** One of the account's deliveries with its attempt log (oldest attempt first). */
export async function getDelivery(
  pool: Pool,
  request: webhook.GetDeliveryRequest,
): Promise<webhook.Delivery> {
  requireAccount(request.accountId).throwIfAny();
  const row = await selectDelivery(pool, request.accountId, request.deliveryId);
  const { rows: attempts } = await pool.query<AttemptRow>(
    `SELECT attempt, started_at, duration_ms, status_code, outcome, error
       FROM webhook.delivery_attempts WHERE delivery_id = $1
      ORDER BY attempt DESC LIMIT $2`,
    [row.id, maxAttemptLog],
  );
  return toDelivery(row, attempts.reverse());
}

async function selectDelivery(db: Pick<Pool, "query">, accountId: string, id: string) {
  if (!isId(id, "wdl")) throw notFound("the delivery");
  const { rows } = await db.query<DeliveryRow>(
    `SELECT ${deliveryColumns} FROM webhook.deliveries d
      JOIN webhook.subscriptions s ON s.id = d.subscription_id
     WHERE d.id = $1 AND d.account_id = $2 AND s.status <> 'deleted'`,
    [id, accountId],
  );
  if (!rows[0]) throw notFound("the delivery");
  return rows[0];
}

/**
 * Replays a failed delivery: back to pending with a fresh retry schedule, in a new dispatch
 * generation. The webhook-id (the event id) and the body stay the same, so receivers dedupe.
 */
export async function retryDelivery(
  ctx: WebhookContext,
  request: webhook.RetryDeliveryRequest,
): Promise<webhook.Delivery> {
  requireAccount(request.accountId).throwIfAny();
  const row = await withTransaction(ctx.pool, async (client) => {
    const current = await selectDelivery(client, request.accountId, request.deliveryId);
    const { rows } = await client.query<DeliveryRow & { dispatch: number; trace_carrier: unknown }>(
      `UPDATE webhook.deliveries d
          SET status = 'pending', dispatch = d.dispatch + 1, cycle_attempts = 0,
              next_attempt_at = now(), failed_at = NULL
         FROM webhook.subscriptions s
        WHERE d.id = $1 AND d.status = 'failed' AND s.id = d.subscription_id AND s.status = 'active'
        RETURNING ${deliveryColumns}, d.dispatch, d.trace_carrier`,
      [current.id],
    );
    if (rows[0]) return rows[0];
    if (current.status !== "failed") {
      throw new DomainError(
        "invalid-state",
        `the delivery is ${current.status}; only a failed delivery can be retried`,
        {
          extensions: { status: current.status },
        },
      );
    }
    throw new DomainError(
      "invalid-state",
      "the subscription is not active; set its status to active first",
    );
  });
  await ctx.dispatcher.dispatch({
    id: row.id,
    dispatch: row.dispatch,
    eventType: row.event_type,
    trace: row.trace_carrier,
  });
  return toDelivery(row);
}
