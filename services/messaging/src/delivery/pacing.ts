import type { Queryable } from "@switchboard/kit";

/**
 * Per-sender pacing (GCRA): each sending number has a theoretical arrival time `tat`, the
 * earliest its next message may go. A message books its turn once — max(tat, now) — and moves
 * `tat` one interval on, so a burst from one number is spread at its pace, other numbers are
 * not held up behind it, and workers catching up on a backlog never exceed the pace (a late
 * message books a late turn). Runs in the claim's transaction, under the message's row lock;
 * the sender's row serialises the bookings of one number. Returns the booked turn.
 */
export async function bookTurn(
  db: Queryable,
  messageId: string,
  sender: string,
  intervalMs: number,
): Promise<Date> {
  const { rows } = await db.query<{ turn: Date }>(
    `WITH booked AS (
       INSERT INTO messaging.sender_submits AS s (sender, tat)
       VALUES ($2, now() + make_interval(secs => $3 / 1000.0))
       ON CONFLICT (sender) DO UPDATE
         SET tat = greatest(s.tat, now()) + make_interval(secs => $3 / 1000.0)
       RETURNING tat - make_interval(secs => $3 / 1000.0) AS turn
     )
     UPDATE messaging.messages SET scheduled_at = (SELECT turn FROM booked)
      WHERE id = $1
      RETURNING scheduled_at AS turn`,
    [messageId, sender, intervalMs],
  );
  const row = rows[0];
  if (!row) throw new Error(`message ${messageId} vanished while booking its turn`);
  return row.turn;
}
