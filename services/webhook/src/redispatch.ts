import type { Logger, Pool } from "@switchboard/kit";
import type { Dispatcher } from "./dispatch.js";
import { purgeEvents } from "./events.js";

/**
 * Nothing lost: a pending delivery whose job is gone (the process died between commit and
 * publish, Redis lost its data, the in-process queue of the embedded mode restarted) is handed
 * to a new job of the next dispatch generation.
 */
interface PendingRow {
  id: string;
  dispatch: number;
  event_type: string;
  trace_carrier: unknown;
  next_attempt_at: Date;
}

const batch = 500;

/** Pending deliveries overdue by `overdueMs` get a new job now; returns how many. */
export async function redispatchOverdue(
  pool: Pool,
  dispatcher: Dispatcher,
  overdueMs: number,
): Promise<number> {
  let total = 0;
  for (;;) {
    const { rows } = await pool.query<PendingRow>(
      `UPDATE webhook.deliveries d SET dispatch = d.dispatch + 1, next_attempt_at = now()
        WHERE d.id IN (
          SELECT id FROM webhook.deliveries
           WHERE status = 'pending' AND next_attempt_at < now() - $1 * interval '1 millisecond'
           ORDER BY next_attempt_at LIMIT $2 FOR UPDATE SKIP LOCKED)
          AND d.status = 'pending'
        RETURNING d.id, d.dispatch, d.event_type, d.trace_carrier, d.next_attempt_at`,
      [overdueMs, batch],
    );
    await dispatcher.dispatchAll(rows.map(toDispatch));
    total += rows.length;
    if (rows.length < batch) return total;
  }
}

/**
 * Every pending delivery gets a new job at its scheduled time: for a queue that starts empty
 * (the embedded mode's in-process queue after a restart).
 */
export async function redispatchAllPending(pool: Pool, dispatcher: Dispatcher): Promise<number> {
  let total = 0;
  let after = "";
  for (;;) {
    const { rows } = await pool.query<PendingRow>(
      `UPDATE webhook.deliveries d SET dispatch = d.dispatch + 1
        WHERE d.id IN (
          SELECT id FROM webhook.deliveries
           WHERE status = 'pending' AND id > $1 ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED)
          AND d.status = 'pending'
        RETURNING d.id, d.dispatch, d.event_type, d.trace_carrier, d.next_attempt_at`,
      [after, batch],
    );
    const now = Date.now();
    await dispatcher.dispatchAll(
      rows.map((row) => ({ ...toDispatch(row), delayMs: row.next_attempt_at.getTime() - now })),
    );
    total += rows.length;
    if (rows.length < batch) return total;
    after = rows.reduce((max, row) => (row.id > max ? row.id : max), after);
  }
}

const toDispatch = (row: PendingRow) => ({
  id: row.id,
  dispatch: row.dispatch,
  eventType: row.event_type,
  trace: row.trace_carrier,
});

/**
 * Periodic housekeeping: redispatch overdue deliveries, prune the sink's receipts and the
 * events older than their retention.
 */
export function startSweeper(options: {
  pool: Pool;
  dispatcher: Dispatcher;
  logger: Logger;
  intervalMs: number;
  overdueMs: number;
  eventRetentionMs: number;
}): { stop(): Promise<void> } {
  const { pool, dispatcher, logger } = options;
  let running: Promise<void> = Promise.resolve();
  const sweep = async () => {
    try {
      const redispatched = await redispatchOverdue(pool, dispatcher, options.overdueMs);
      if (redispatched > 0)
        logger.warn({ redispatched }, "overdue webhook deliveries redispatched");
      await pool.query(
        `DELETE FROM webhook.sink_receipts WHERE received_at < now() - interval '1 day'`,
      );
      await purgeEvents(pool, options.eventRetentionMs);
    } catch (error) {
      logger.warn({ err: error }, "webhook sweep failed; will retry");
    }
  };
  const timer = setInterval(() => {
    running = running.then(sweep);
  }, options.intervalMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}
