import { pruneOutbox, withTransaction, type EventBus, type Logger } from "@switchboard/kit";
import type { MessagingContext } from "../context.js";
import { transition } from "../messages/transitions.js";
import { SCHEMA } from "../outbox.js";
import { dispatchMessage } from "./dispatcher.js";

const batch = 500;
const outboxRetentionMs = 24 * 3_600_000;

/**
 * Housekeeping that correctness does not wait for but recovery does: messages past their TTL
 * that no worker holds expire; messages whose submit job is overdue (the queue lost it, e.g.
 * the in-process bus of a restarted embedded platform, or a worker died holding the lease) are
 * dispatched again — the claim and the carrier's client reference keep that from ever sending
 * twice; messages whose receipt is overdue get it asked for again (when the carrier can); and
 * published outbox rows older than a day are pruned.
 */
export async function sweepMessages(
  ctx: MessagingContext,
  bus: EventBus,
): Promise<{ expired: number; redispatched: number; receiptsRequested: number }> {
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
      transition(client, id, "expired", {
        error_code: "ttl-expired",
        error_message: "the message was not handed to the carrier before its TTL passed",
        lease_until: null,
      }),
    );
    if (done) expired += 1;
  }
  if (expired > 0) ctx.outbox.wake();

  const stalled = await ctx.pool.query<{ id: string; attempts: number }>(
    `SELECT id, attempts FROM messaging.messages
      WHERE (status = 'queued' AND coalesce(scheduled_at, created_at) < now() - make_interval(secs => $2 / 1000.0))
         OR (status = 'sending' AND lease_until < now() - make_interval(secs => $2 / 1000.0))
         OR (status = 'sending' AND lease_until IS NULL
             AND updated_at < now() - make_interval(secs => ($2 + $3) / 1000.0))
      ORDER BY created_at LIMIT $1`,
    [batch, ctx.config.redispatchAfterMs, ctx.config.retryMaxMs],
  );
  // One job per message and sweep window: a repeat within the window is deduped by its id.
  const window = Math.floor(Date.now() / ctx.config.redispatchAfterMs);
  for (const row of stalled.rows) {
    await dispatchMessage(ctx, bus, row.id, `s${row.attempts}w${window}`);
  }
  const receipts = await requestOverdueReceipts(ctx);
  await pruneOutbox(ctx.pool, SCHEMA, { olderThanMs: outboxRetentionMs, limit: 5_000 });
  // Parts of an inbound message whose other parts never came (SMSCs give up within hours).
  await ctx.pool.query(
    "DELETE FROM messaging.inbound_parts WHERE received_at < now() - interval '1 day'",
  );
  return { expired, redispatched: stalled.rows.length, receiptsRequested: receipts };
}

/** Messages `sent` for longer than MESSAGING_RECEIPT_OVERDUE_MS: ask the carrier again. */
async function requestOverdueReceipts(ctx: MessagingContext): Promise<number> {
  const carrier = ctx.carrier;
  if (!carrier.requestReceipt) return 0;
  const { rows } = await ctx.pool.query<{
    provider_message_id: string;
    to_number: string;
    channel: string;
  }>(
    `SELECT provider_message_id, to_number, coalesce(channel_used, channel) AS channel
       FROM messaging.messages
      WHERE status = 'sent' AND sent_at < now() - make_interval(secs => $2 / 1000.0)
      ORDER BY sent_at LIMIT $1`,
    [batch, ctx.config.receiptOverdueMs],
  );
  for (const row of rows) {
    await carrier.requestReceipt({
      providerMessageId: row.provider_message_id,
      to: row.to_number,
      channel: row.channel,
    });
  }
  return rows.length;
}

export interface Sweeper {
  stop(): Promise<void>;
}

export function startSweeper(ctx: MessagingContext, bus: EventBus, logger: Logger): Sweeper {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = sweepMessages(ctx, bus).then(
      (result) => {
        if (result.expired + result.redispatched + result.receiptsRequested > 0) {
          logger.info(result, "messages swept");
        }
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
