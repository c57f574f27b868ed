import type pg from "pg";
import { qualified } from "./outbox-sql.js";

export type ConsumeOnceResult<T> = { processed: true; result: T } | { processed: false };

/**
 * Applies an event's effect at most once per `consumer`. MUST run on the client of the
 * consumer's open transaction: the event id is inserted into `<schema>.processed_events` and
 * `work` runs only if that insert was new, so the effect and the record of it commit (or roll
 * back, e.g. for a retry) together. A redelivery finds the id and is a no-op. Two concurrent
 * deliveries of one event serialise on the primary key: the second waits for the first's
 * transaction and then skips (or, if the first rolled back, does the work itself).
 */
export async function consumeOnce<T>(
  client: pg.ClientBase,
  schema: string,
  consumer: string,
  eventId: string,
  work: (client: pg.ClientBase) => Promise<T>,
): Promise<ConsumeOnceResult<T>> {
  const { rowCount } = await client.query(
    `INSERT INTO ${qualified(schema, "processed_events")} (consumer, event_id) VALUES ($1, $2)
     ON CONFLICT (consumer, event_id) DO NOTHING`,
    [consumer, eventId],
  );
  if (rowCount === 0) return { processed: false };
  return { processed: true, result: await work(client) };
}

/** True when `consumer` has already applied `eventId` (committed). */
export async function isEventProcessed(
  db: Pick<pg.Pool, "query"> | pg.ClientBase,
  schema: string,
  consumer: string,
  eventId: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `SELECT 1 FROM ${qualified(schema, "processed_events")} WHERE consumer = $1 AND event_id = $2`,
    [consumer, eventId],
  );
  return (rowCount ?? 0) > 0;
}
