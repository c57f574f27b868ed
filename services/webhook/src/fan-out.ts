import {
  consumeEvents,
  consumeOnce,
  newId,
  toPublicEvent,
  withTransaction,
  type EventEnvelope,
  type QueueWorker,
} from "@switchboard/kit";
import { schema, type WebhookContext } from "./context.js";
import type { DispatchInput } from "./dispatch.js";
import { isDeliverableType, subscribesTo } from "./event-catalog.js";
import { batchedEventKeeper, keepEventNow, type EventKeeper } from "./events.js";
import { statusCallbackOf, statusCallbackSubscription } from "./status-callbacks.js";
import { readActiveSubscriptions, type ActiveSubscriptions } from "./subscription-cache.js";

/** The consumer group the outbox relays feed (platformConsumerGroups) and our consumer name. */
export const fanOutGroup = "webhook";
const consumer = "fan-out";

/**
 * Fan-out: each platform event becomes one delivery per active subscription of the event's
 * account whose patterns select its type (as they stand when the event is taken; a delivery
 * for a subscription paused meanwhile ends without an attempt). The deliveries and the
 * processed-event record commit together (consumeOnce), so a redelivered event adds nothing;
 * the jobs are published after the commit. A redelivery republishes the event's pending deliveries (job ids dedupe),
 * which covers a crash between commit and publish; the sweeper covers the rest. Every event
 * taken is also kept for GET /api/events (events.ts; the events taken at once share one
 * insert, batchedEventKeeper), whether or not a subscription wants it,
 * and one whose resource has a status callback that selects it is delivered there too.
 */
export function startFanOut(
  ctx: WebhookContext,
  subscriptions: ActiveSubscriptions,
  concurrency = 8,
): QueueWorker {
  const keep = batchedEventKeeper(ctx.pool);
  return consumeEvents(
    ctx.bus,
    fanOutGroup,
    async (event) => {
      await fanOut(ctx, event, subscriptions, keep);
    },
    { concurrency, batched: true },
  );
}

interface Created {
  id: string;
  dispatch: number;
}

export async function fanOut(
  ctx: WebhookContext,
  event: EventEnvelope,
  subscriptions: ActiveSubscriptions = readActiveSubscriptions(ctx.pool),
  keep: EventKeeper = keepEventNow(ctx.pool),
): Promise<number> {
  // webhook.test goes only to the subscription it tests (never through the bus).
  if (!isDeliverableType(event.type) || event.type === "webhook.test") return 0;
  const payload = JSON.stringify(toPublicEvent(event));
  await keep(event, payload);
  const matched = (await subscriptions(event.account_id)).filter((s) =>
    subscribesTo(s.events, event.type),
  );
  const callback = statusCallbackOf(event);
  // Most events select no subscription: nothing to mark or undo.
  if (matched.length === 0 && !callback) return 0;
  const trace = event.trace ? JSON.stringify(event.trace) : null;
  const outcome = await withTransaction(ctx.pool, (client) =>
    consumeOnce(client, schema, consumer, event.id, async () => {
      const targets = matched.map((s) => ({ subscription: s.id, url: null as string | null }));
      if (callback) {
        const owner = await statusCallbackSubscription(client, ctx, event.account_id);
        targets.push({ subscription: owner.id, url: callback.url });
      }
      const { rows } = await client.query<Created>(
        `INSERT INTO webhook.deliveries
           (id, account_id, subscription_id, target_url, resource_id, event_id, event_type,
            payload, trace_carrier, status, next_attempt_at)
         SELECT d.id, $3, d.subscription_id, d.target_url, $9, $4, $5, $6, $7::jsonb,
                'pending', now()
           FROM unnest($1::text[], $2::text[], $8::text[]) AS d (id, subscription_id, target_url)
         ON CONFLICT (subscription_id, event_id) DO NOTHING
         RETURNING id, dispatch`,
        [
          targets.map(() => newId("wdl")),
          targets.map((t) => t.subscription),
          event.account_id,
          event.id,
          event.type,
          payload,
          trace,
          targets.map((t) => t.url),
          event.resource_id,
        ],
      );
      return rows;
    }),
  );
  const created = outcome.processed
    ? outcome.result
    : (
        await ctx.pool.query<Created>(
          `SELECT id, dispatch FROM webhook.deliveries WHERE event_id = $1 AND status = 'pending'`,
          [event.id],
        )
      ).rows;
  const jobs: DispatchInput[] = created.map((row) => ({
    id: row.id,
    dispatch: row.dispatch,
    eventType: event.type,
    trace: event.trace,
  }));
  await ctx.dispatcher.dispatchAll(jobs);
  return jobs.length;
}
