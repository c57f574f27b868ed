import { pruneOutbox, withTransaction, type EventBus, type Logger } from "@switchboard/kit";
import type { MessagingContext } from "../context.js";
import { transition } from "../messages/transitions.js";
import { SCHEMA } from "../outbox.js";
import { dispatchMessage } from "./dispatcher.js";
import { publishSubmit } from "./submit-queue.js";

const batch = 500;
const outboxRetentionMs = 24 * 3_600_000;

/**
 * Housekeeping that correctness does not wait for but recovery does: messages past their TTL
 * that no worker holds expire; messages whose submit job is overdue (the queue lost it, e.g.
 * the in-process bus of a restarted embedded platform, or a worker died holding the lease) are
 * dispatched again — the claim and the carrier's client reference keep that from ever sending
 * twice; published outbox rows older than a day are pruned.
 */
export async function sweepMessages(
  ctx: MessagingContext,
  bus: EventBus,
): Promise<{ expired: number; redispatched: number }> {
  const overdue = await ctx.pool.query<{ id: string }>(
    `SELECT id FROM messaging.messages
      WHERE status IN ('queued', 'sending') AND expires_at <= now()
        AND (lease_until IS NULL OR lease_until < now())
      ORDER BY created_at LIMIT $1`,
    [batch],
  );
  let expired = 0;
  for (const { id } of overdue.rows) {
    const done = await withTransaction(ctx.pool, (client) =>
      transition(client, ctx.outbox, id, "expired", {
        error_code: "ttl-expired",
        error_message: "the message was not handed to the carrier before its TTL passed",
        lease_until: null,
      }),
    );
    if (done) expired += 1;
  }
  if (expired > 0) ctx.outbox.wake();

  const stalled = await ctx.pool.query<{ id: string; attempts: number; scheduled: boolean }>(
    `SELECT id, attempts, scheduled_at IS NOT NULL AS scheduled FROM messaging.messages
      WHERE (status = 'queued' AND coalesce(scheduled_at, created_at) < now() - make_interval(secs => $2 / 1000.0))
         OR (status = 'sending' AND lease_until < now() - make_interval(secs => $2 / 1000.0))
         OR (status = 'sending' AND lease_until IS NULL
             AND updated_at < now() - make_interval(secs => ($2 + $3) / 1000.0))
      ORDER BY created_at LIMIT $1`,
    [batch, ctx.config.redispatchAfterMs, ctx.config.retryMaxMs],
  );
  for (const row of stalled.rows) {
    if (row.scheduled) {
      await publishSubmit(bus, ctx.config, row.id, { delayMs: 0, generation: row.attempts });
    } else {
      await dispatchMessage(ctx, bus, row.id);
    }
  }
  await pruneOutbox(ctx.pool, SCHEMA, { olderThanMs: outboxRetentionMs, limit: 5_000 });
  return { expired, redispatched: stalled.rows.length };
}

export interface Sweeper {
  stop(): Promise<void>;
}

export function startSweeper(ctx: MessagingContext, bus: EventBus, logger: Logger): Sweeper {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = sweepMessages(ctx, bus).then(
      (result) => {
        if (result.expired + result.redispatched > 0) logger.info(result, "messages swept");
      },
      (error: unknown) => logger.warn({ err: error }, "message sweep failed; will retry"),
    );
  }, ctx.config.sweepIntervalMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
