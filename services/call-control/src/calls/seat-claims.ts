import { DomainError, validationFailed } from "@switchboard/kit";
import type { Tx } from "../scheduler/tx.js";

/**
 * Counts a new call against its seat: one conditional UPDATE under the seat's row lock, so of
 * any number of concurrent claims at most `max_concurrent_calls - active_calls` succeed. The
 * count goes down in the transaction that ends the call (transitions.endCall).
 */
export async function claimSeat(
  tx: Tx,
  accountId: string,
  seatId: string,
  options: { pointer: string },
): Promise<void> {
  const claimed = await tx.client.query(
    `UPDATE call_control.seats SET active_calls = active_calls + 1
      WHERE id = $1 AND account_id = $2 AND status = 'active'
        AND active_calls < max_concurrent_calls`,
    [seatId, accountId],
  );
  if (claimed.rowCount === 1) return;
  const { rows } = await tx.client.query<{ status: string; max_concurrent_calls: number }>(
    `SELECT status, max_concurrent_calls FROM call_control.seats WHERE id = $1 AND account_id = $2`,
    [seatId, accountId],
  );
  const seat = rows[0];
  if (!seat)
    throw validationFailed([{ pointer: options.pointer, detail: "is not a seat of this account" }]);
  if (seat.status !== "active") {
    throw new DomainError("invalid-state", `the seat ${seatId} is disabled`, {
      extensions: { seat_id: seatId },
    });
  }
  throw new DomainError(
    "seat-busy",
    `the seat ${seatId} is at its limit of ${seat.max_concurrent_calls} concurrent calls`,
    { extensions: { seat_id: seatId, max_concurrent_calls: seat.max_concurrent_calls } },
  );
}
