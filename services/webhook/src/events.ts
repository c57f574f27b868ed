import {
  cursorId,
  idPage,
  isId,
  notFound,
  pageLimit,
  requireAccount,
  type EventEnvelope,
  type Pool,
  type Queryable,
} from "@switchboard/kit";
import type { webhook } from "@switchboard/proto";
import { createBatcher } from "./batcher.js";
import { patternProblem } from "./event-catalog.js";

/**
 * The account's recent events (GET /api/events): every event the fan-out takes is kept, its
 * payload exactly as delivered, for the retention period; the sweeper purges older ones.
 */
interface EventRow {
  id: string;
  type: string;
  occurred_at: Date;
  payload: string;
}

const toEvent = (row: EventRow): webhook.Event => ({
  id: row.id,
  type: row.type,
  timestamp: row.occurred_at.toISOString(),
  payload: row.payload,
});

/** An event to keep, and its payload exactly as delivered. */
export interface KeptEvent {
  event: EventEnvelope;
  payload: string;
}

/** Keeps events (each id once: a redelivered event is kept once), in one statement. */
export async function keepEvents(db: Queryable, kept: readonly KeptEvent[]): Promise<void> {
  const unique = [...new Map(kept.map((k) => [k.event.id, k])).values()];
  if (unique.length === 0) return;
  await db.query(
    `INSERT INTO webhook.events (id, account_id, type, occurred_at, payload)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::text[])
     ON CONFLICT (id) DO NOTHING`,
    [
      unique.map((k) => k.event.id),
      unique.map((k) => k.event.account_id),
      unique.map((k) => k.event.type),
      unique.map((k) => k.event.timestamp),
      unique.map((k) => k.payload),
    ],
  );
}

/** Keeps one event (a redelivered event is kept once). */
export type EventKeeper = (event: EventEnvelope, payload: string) => Promise<void>;

/** Keeps each event on its own, one statement each (tests, and a fan-out called directly). */
export const keepEventNow =
  (db: Queryable): EventKeeper =>
  (event, payload) =>
    keepEvents(db, [{ event, payload }]);

/**
 * Keeps the events the fan-out takes at once in one multi-row insert: one statement in flight
 * at a time, what arrives meanwhile (up to 200) in the next, so the statements per event fall as
 * the load grows. A job answers after its event is kept, as before. The first event of a batch
 * waits up to 10 ms for others: a relay batch's events arrive together (the fan-out's group is
 * batched: its job runs every event of the relay's batch at once, however many), and at low
 * load a call's five events arrive one by one over its life, where the wait puts several calls'
 * events in one statement; it is the most a subscriber's delivery waits for its event to be kept
 * (GET /api/events lists an event before any delivery of it goes out).
 */
export function batchedEventKeeper(db: Queryable): EventKeeper {
  const batcher = createBatcher(
    async (kept: KeptEvent[]) => {
      await keepEvents(db, kept);
      return kept.map(() => undefined);
    },
    { maxSize: 200, maxWaitMs: 10, maxInFlight: 1 },
  );
  return (event, payload) => batcher.run({ event, payload });
}

/** Deletes events older than the retention; returns how many. */
export async function purgeEvents(pool: Pool, retentionMs: number): Promise<number> {
  const { rowCount } = await pool.query(
    `DELETE FROM webhook.events WHERE occurred_at < now() - $1 * interval '1 millisecond'`,
    [retentionMs],
  );
  return rowCount ?? 0;
}

/** The account's events, newest first, optionally of one type (or `prefix.*`) and after a time. */
export async function listEvents(
  pool: Pool,
  request: webhook.ListEventsRequest,
): Promise<webhook.ListEventsResponse> {
  const errors = requireAccount(request.accountId);
  const size = pageLimit(request.limit, errors);
  const type = request.type;
  const typeProblem = type === undefined ? undefined : patternProblem(type);
  if (typeProblem) errors.add("#/query/type", typeProblem);
  const after = request.createdAfter === undefined ? undefined : new Date(request.createdAfter);
  if (after && Number.isNaN(after.getTime())) {
    errors.add(
      "#/query/created_after",
      "must be an RFC 3339 date-time such as 2026-11-21T00:00:00Z",
    );
  }
  errors.throwIfAny();
  const binding = `events|${request.accountId}|${type ?? ""}|${after?.toISOString() ?? ""}`;
  const below = cursorId(request.cursor, binding);
  const exact = type !== undefined && !type.endsWith("*") ? type : null;
  const prefix = type?.endsWith(".*") ? `${type.slice(0, -1)}%` : null;
  const { rows } = await pool.query<EventRow>(
    `SELECT id, type, occurred_at, payload FROM webhook.events
      WHERE account_id = $1 AND ($2::text IS NULL OR type = $2)
        AND ($3::text IS NULL OR type LIKE $3)
        AND ($4::timestamptz IS NULL OR occurred_at > $4)
        AND ($5::text IS NULL OR id < $5)
      ORDER BY id DESC LIMIT $6`,
    [request.accountId, exact, prefix, after?.toISOString() ?? null, below ?? null, size + 1],
  );
  const { items, nextCursor, hasMore } = idPage(rows, size, binding, toEvent);
  return { events: items, nextCursor, hasMore };
}

/** One of the account's kept events. */
export async function getEvent(
  pool: Pool,
  request: webhook.GetEventRequest,
): Promise<webhook.Event> {
  requireAccount(request.accountId).throwIfAny();
  if (!isId(request.eventId, "evt")) throw notFound("the event");
  const { rows } = await pool.query<EventRow>(
    `SELECT id, type, occurred_at, payload FROM webhook.events WHERE id = $1 AND account_id = $2`,
    [request.eventId, request.accountId],
  );
  if (!rows[0]) throw notFound("the event");
  return toEvent(rows[0]);
}
