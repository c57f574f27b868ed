import type { Queryable } from "../db.js";
import { qualified } from "./outbox-sql.js";

/**
 * Housekeeping for a periodic job. Published outbox rows are only history (the sequence
 * counters are kept apart); processed-event ids must outlive every possible redelivery (the
 * longest retry schedule plus the bus's retention), so keep them for days, not minutes.
 * Each call deletes at most `limit` rows; call again while it returns `limit`.
 */
export async function pruneOutbox(
  db: Queryable,
  schema: string,
  options: { olderThanMs: number; limit?: number },
): Promise<number> {
  const table = qualified(schema, "outbox");
  const { rowCount } = await db.query(
    `DELETE FROM ${table} WHERE id IN (
       SELECT id FROM ${table}
       WHERE published_at IS NOT NULL AND published_at < now() - $1 * interval '1 millisecond'
       LIMIT $2)`,
    [options.olderThanMs, options.limit ?? 10_000],
  );
  return rowCount ?? 0;
}

export async function pruneProcessedEvents(
  db: Queryable,
  schema: string,
  options: { olderThanMs: number; limit?: number },
): Promise<number> {
  const table = qualified(schema, "processed_events");
  const { rowCount } = await db.query(
    `DELETE FROM ${table} WHERE (consumer, event_id) IN (
       SELECT consumer, event_id FROM ${table}
       WHERE processed_at < now() - $1 * interval '1 millisecond'
       LIMIT $2)`,
    [options.olderThanMs, options.limit ?? 10_000],
  );
  return rowCount ?? 0;
}
