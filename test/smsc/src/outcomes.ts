import smpp from "smpp";
import type { SubmitInfo } from "./records.js";

/** A delivery receipt's final `stat:` (SMPP 3.4 appendix B). */
export type Stat =
  "DELIVRD" | "EXPIRED" | "DELETED" | "UNDELIV" | "ACCEPTD" | "UNKNOWN" | "REJECTD";

/**
 * What the SMSC does with one submit_sm:
 * - `{ stat, err? }`: accept it, then send a receipt with that state (and `err:` code, default
 *   {@link defaultErr});
 * - `{ status }`: refuse it with that command_status (no message id, no receipt);
 * - `"no-receipt"`: accept it and never send a receipt (a lost receipt, for overdue handling).
 */
export type Outcome = { stat: Stat; err?: number } | { status: number } | "no-receipt";

/** What an outcome function knows besides the submit itself. */
export interface OutcomeContext {
  /**
   * 1 for the first submit to this destination that reached the outcome (the rate limit
   * throttles before), 2 for the next...: lets a refusal happen once, then the retry pass.
   */
  seen: number;
}

export type OutcomeFunction = (submit: SubmitInfo, context: OutcomeContext) => Outcome;

/** The `err:` code a receipt carries by default: 000 when delivered, a code per failure. */
export const defaultErr: Readonly<Record<Stat, number>> = {
  DELIVRD: 0,
  ACCEPTD: 0,
  UNDELIV: 1,
  REJECTD: 2,
  EXPIRED: 3,
  DELETED: 4,
  UNKNOWN: 5,
};

/** The receipt's message_state TLV for each `stat:` (the library's MESSAGE_STATE). */
export const messageStates: Readonly<Record<Stat, number>> = {
  DELIVRD: smpp.MESSAGE_STATE.DELIVERED,
  EXPIRED: smpp.MESSAGE_STATE.EXPIRED,
  DELETED: smpp.MESSAGE_STATE.DELETED,
  UNDELIV: smpp.MESSAGE_STATE.UNDELIVERABLE,
  ACCEPTD: smpp.MESSAGE_STATE.ACCEPTED,
  UNKNOWN: smpp.MESSAGE_STATE.UNKNOWN,
  REJECTD: smpp.MESSAGE_STATE.REJECTED,
};

/**
 * The default outcome, by the last digit of the destination as the ESME sent it, so a test
 * picks the behaviour by picking the number:
 *
 * | digit | outcome                                                          |
 * | ----- | ---------------------------------------------------------------- |
 * | 0     | DELIVRD                                                          |
 * | 1     | UNDELIV                                                          |
 * | 2     | REJECTD                                                          |
 * | 3     | EXPIRED                                                          |
 * | 4     | DELETED                                                          |
 * | 5     | UNKNOWN                                                          |
 * | 6     | ESME_RTHROTTLED for the destination's first submit, then DELIVRD |
 * | 7     | refused with ESME_RINVDSTADR (no message id, no receipt)         |
 * | 8     | ESME_RMSGQFUL for the destination's first submit, then DELIVRD   |
 * | 9     | accepted, but no receipt is ever sent                            |
 *
 * Anything else (no digit at the end) is DELIVRD.
 */
export const defaultOutcome: OutcomeFunction = (submit, { seen }) => {
  switch (submit.destination.at(-1)) {
    case "1":
      return { stat: "UNDELIV" };
    case "2":
      return { stat: "REJECTD" };
    case "3":
      return { stat: "EXPIRED" };
    case "4":
      return { stat: "DELETED" };
    case "5":
      return { stat: "UNKNOWN" };
    case "6":
      return seen === 1 ? { status: smpp.ESME_RTHROTTLED } : { stat: "DELIVRD" };
    case "7":
      return { status: smpp.ESME_RINVDSTADR };
    case "8":
      return seen === 1 ? { status: smpp.ESME_RMSGQFUL } : { stat: "DELIVRD" };
    case "9":
      return "no-receipt";
    default:
      return { stat: "DELIVRD" };
  }
};

/** The name of a command_status (`ESME_RTHROTTLED`), or its hex value when the library has none. */
export function statusName(status: number): string {
  const name = Object.entries(smpp.errors).find(([, value]) => value === status)?.[0];
  return name ?? `0x${status.toString(16).padStart(8, "0")}`;
}
