import { DomainError, validationFailed, type Queryable } from "@switchboard/kit";
import type { Tx } from "../scheduler/tx.js";

/**
 * The claim's guarded UPDATE: one conditional UPDATE under the seat's row lock, so of any number
 * of concurrent claims at most `max_concurrent_calls - active_calls` succeed. `$1` is the seat,
 * `$2` the account; `where` adds a condition (e.g. that a CTE inserted the call).
 */
export const seatClaimStatement = (seat: string, account: string, where = "true") =>
  `UPDATE call_control.seats SET active_calls = active_calls + 1
    WHERE id = ${seat} AND account_id = ${account} AND status = 'active'
      AND active_calls < max_concurrent_calls AND ${where}
   RETURNING id`;

/**
 * Counts a new call against its seat (seatClaimStatement). The count goes down in the
 * transaction that ends the call (transitions.endCall).
 */
export async function claimSeat(
  tx: Tx,
  accountId: string,
  seatId: string,
  options: { pointer: string },
): Promise<void> {
  const claimed = await tx.client.query(seatClaimStatement("$1", "$2"), [seatId, accountId]);
  if (claimed.rowCount === 1) return;
  await refuseSeat(tx, accountId, seatId, options);
}

/** Why a seat's claim did not apply, as the problem the request gets (always throws). */
export async function refuseSeat(
  tx: Tx,
  accountId: string,
  seatId: string,
  options: { pointer: string },
): Promise<never> {
  throw (await seatRefusal(tx.client, accountId, seatId, options)).error;
}

/**
 * Why a seat's claim did not apply: the problem the request gets, and whether the seat is no
 * seat of the account at all.
 */
export async function seatRefusal(
  db: Queryable,
  accountId: string,
  seatId: string,
  options: { pointer: string },
): Promise<{ notFound: boolean; error: Error }> {
  const { rows } = await db.query<{ status: string; max_concurrent_calls: number }>(
    `SELECT status, max_concurrent_calls FROM call_control.seats WHERE id = $1 AND account_id = $2`,
    [seatId, accountId],
  );
  const seat = rows[0];
  if (!seat) {
    const detail = "is not a seat of this account";
    return { notFound: true, error: validationFailed([{ pointer: options.pointer, detail }]) };
  }
  if (seat.status !== "active") {
    const error = new DomainError("invalid-state", `the seat ${seatId} is disabled`, {
      extensions: { seat_id: seatId },
    });
    return { notFound: false, error };
  }
  const error = new DomainError(
    "seat-busy",
    `the seat ${seatId} is at its limit of ${seat.max_concurrent_calls} concurrent calls`,
    { extensions: { seat_id: seatId, max_concurrent_calls: seat.max_concurrent_calls } },
  );
  return { notFound: false, error };
}
