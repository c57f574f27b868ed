import { DomainError, requireAccount, runOnce } from "@switchboard/kit";
import type { callcontrol } from "@switchboard/proto";
import type { CallEngine } from "./call-engine.js";
import { findCall } from "./call-queries.js";
import { keyedCallChange, type CallRow } from "./call-rows.js";
import { isTerminal, type Hangup } from "./states.js";

/**
 * What hanging up means in each live state, from the account's side: it is the caller of an
 * outbound call (CANCEL before answer, BYE after) and the callee of an inbound one (decline
 * while ringing, BYE after).
 */
export function accountHangup(row: Pick<CallRow, "direction" | "status">): Hangup {
  const answered = row.status === "in_progress";
  if (row.direction === "outbound") {
    return answered
      ? { cause: "normal_clearing", source: "caller", sipCode: 200 }
      : { cause: "originator_cancel", source: "caller", sipCode: 487 };
  }
  return answered
    ? { cause: "normal_clearing", source: "callee", sipCode: 200 }
    : { cause: "call_rejected", source: "callee", sipCode: 603 };
}

/**
 * HangupCall: ends a live call; an ended call is 409 invalid-state (it never changes). Under an
 * Idempotency-Key the retry of a hangup that ended the call gets that call (kit runOnce).
 */
export async function hangupCall(
  engine: CallEngine,
  request: callcontrol.HangupCallRequest,
  idempotencyKey?: string,
): Promise<CallRow> {
  requireAccount(request.accountId).throwIfAny();
  const once = keyedCallChange("hangup-call", request, idempotencyKey);
  return engine.transaction((tx) =>
    runOnce(tx.client, once, async () => {
      const row = await findCall(tx.client, request.accountId, request.callId, { lock: true });
      if (isTerminal(row.status)) {
        throw new DomainError("invalid-state", `the call has already ended (${row.status})`, {
          extensions: { status: row.status },
        });
      }
      const ended = await engine.hangupLive(tx, row, accountHangup(row));
      if (!ended) throw new DomainError("invalid-state", "the call has already ended");
      return ended;
    }),
  );
}
