import type { Queryable } from "@switchboard/kit";

/**
 * Per-sender pacing: each sending number gets one slot every `intervalMs`, so a burst from one
 * number is spread at the carrier's pace while other numbers are not held up behind it. A
 * message reserves its slot once (`scheduled_at`); a repeated dispatch (a redelivery, or the
 * retry of a try that failed) gets the same slot. Returns the slot, or undefined when the
 * message is past sending (sent or ended).
 */
export async function reserveSlot(
  db: Queryable,
  messageId: string,
  intervalMs: number,
): Promise<Date | undefined> {
  const { rows } = await db.query<{ at: Date | null; queued: boolean }>(
    `WITH m AS (
       SELECT id, from_number, scheduled_at FROM messaging.messages
        WHERE id = $1 AND status IN ('queued', 'sending')
     ), slot AS (
       INSERT INTO messaging.sender_pacing AS p (sender, next_at)
       SELECT from_number, now() + make_interval(secs => $2 / 1000.0) FROM m WHERE scheduled_at IS NULL
       ON CONFLICT (sender) DO UPDATE
         SET next_at = greatest(p.next_at, now()) + make_interval(secs => $2 / 1000.0)
       RETURNING p.next_at - make_interval(secs => $2 / 1000.0) AS at
     ), stamped AS (
       UPDATE messaging.messages SET scheduled_at = (SELECT at FROM slot)
        WHERE id = $1 AND scheduled_at IS NULL AND EXISTS (SELECT 1 FROM slot)
       RETURNING scheduled_at
     )
     SELECT coalesce((SELECT scheduled_at FROM stamped), (SELECT scheduled_at FROM m)) AS at,
            EXISTS (SELECT 1 FROM m) AS queued`,
    [messageId, intervalMs],
  );
  const row = rows[0];
  if (!row?.queued) return undefined;
  return row.at ?? new Date();
}
