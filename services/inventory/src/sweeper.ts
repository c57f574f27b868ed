import { withTransaction, type Logger, type Pool } from "@switchboard/kit";
import { writeEvent } from "./outbox.js";

/**
 * Marks active holds past expires_at `expired`, frees their numbers (if still theirs) and writes
 * `number.hold_expired`. Correctness never depends on it: expiry is also applied lazily on read.
 * Returns how many holds it expired (at most `batch` per call).
 */
export async function sweepExpiredHolds(pool: Pool, batch = 500): Promise<number> {
  return withTransaction(pool, async (client) => {
    const expired = await client.query<{
      id: string;
      account_id: string;
      number_id: string;
      e164: string;
      expires_at: Date;
    }>(
      `UPDATE inventory.holds h SET status = 'expired', expired_at = now()
        WHERE h.id IN (SELECT id FROM inventory.holds
                        WHERE status = 'active' AND expires_at <= now()
                        ORDER BY expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING h.id, h.account_id, h.number_id, h.e164, h.expires_at`,
      [batch],
    );
    for (const hold of expired.rows) {
      const number = await client.query<{ event_sequence: number }>(
        `UPDATE inventory.numbers
            SET held_until = CASE WHEN hold_id = $2 THEN NULL ELSE held_until END,
                held_by = CASE WHEN hold_id = $2 THEN NULL ELSE held_by END,
                hold_id = CASE WHEN hold_id = $2 THEN NULL ELSE hold_id END,
                event_sequence = event_sequence + 1
          WHERE id = $1
         RETURNING event_sequence`,
        [hold.number_id, hold.id],
      );
      await writeEvent(client, {
        type: "number.hold_expired",
        accountId: hold.account_id,
        resourceId: hold.number_id,
        sequence: number.rows[0]!.event_sequence,
        data: {
          number_id: hold.number_id,
          number: hold.e164,
          hold_id: hold.id,
          expired_at: hold.expires_at.toISOString(),
        },
      });
    }
    return expired.rows.length;
  });
}

export interface Sweeper {
  /** Runs one sweep now (also used by tests). */
  sweep(): Promise<number>;
  /** Stops the timer and waits for a sweep in progress. */
  stop(): Promise<void>;
}

/** Sweeps every `intervalMs`, draining a backlog in consecutive batches. */
export function startSweeper(options: { pool: Pool; logger: Logger; intervalMs: number }): Sweeper {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<number> = Promise.resolve(0);
  let stopped = false;
  const sweep = async (): Promise<number> => {
    let total = 0;
    for (;;) {
      const count = await sweepExpiredHolds(options.pool);
      total += count;
      if (count < 500 || stopped) return total;
    }
  };
  const tick = () => {
    running = sweep().then(
      (count) => {
        if (count > 0) options.logger.info({ count }, "expired holds swept");
        return count;
      },
      (error: unknown) => {
        options.logger.warn({ err: error }, "hold sweep failed; retrying next interval");
        return 0;
      },
    );
    void running.then(() => {
      if (!stopped) schedule();
    });
  };
  const schedule = () => {
    timer = setTimeout(tick, options.intervalMs);
    timer.unref();
  };
  schedule();
  return {
    sweep: () => {
      running = running.then(sweep, sweep);
      return running;
    },
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running.catch(() => undefined);
    },
  };
}
