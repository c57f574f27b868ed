import type { SubmitFault } from "./faults.js";
import type { Stat } from "./outcomes.js";

/**
 * What the SMSC records, for tests to assert on. Times are `Date.now()` milliseconds. Records
 * are appended as things happen; a receipt attempt is updated in place when its answer comes.
 */

export type BindCommand = "bind_transmitter" | "bind_receiver" | "bind_transceiver";

export interface BindRecord {
  sessionId: number;
  command: BindCommand;
  systemId: string;
  /** The bind_resp command_status: 0 when bound. */
  status: number;
  at: number;
}

/** A concatenation header: the message's reference, its part count and this part (1-based). */
export interface Concat {
  ref: number;
  total: number;
  seq: number;
}

/** A submit_sm as the SMSC read it, before it is answered. */
export interface SubmitInfo {
  sessionId: number;
  systemId: string;
  /** The submit_sm's sequence_number on its session. */
  sequence: number;
  source: string;
  sourceTon: number;
  sourceNpi: number;
  destination: string;
  destinationTon: number;
  destinationNpi: number;
  dataCoding: number;
  esmClass: number;
  registeredDelivery: number;
  /** From the UDH (IEI 0x00, 8-bit reference, or 0x08, 16-bit) when esm_class has UDHI. */
  udh?: Concat & { iei: 0x00 | 0x08 };
  /** From the sar_msg_ref_num / sar_total_segments / sar_segment_seqnum TLVs. */
  sar?: Concat;
  /**
   * The text as the `smpp` library decodes it (GSM 03.38 for data_coding 0 and 1, UCS-2 for 8,
   * Latin-1 for 3), from short_message or, when that is empty, message_payload. Binary
   * data codings come out as hex.
   */
  text: string;
  at: number;
}

/** An accepted submit: answered ESME_ROK with `messageId`. */
export interface SubmitRecord extends SubmitInfo {
  messageId: string;
  /** The receipt it will get (`none` when registered_delivery did not ask for this one). */
  receipt: Stat | "none";
}

/** A submit answered with an error status: `throttled` or `refused`. */
export interface RefusedSubmit extends SubmitInfo {
  status: number;
  /** `rate`: over maxPerSecond; `outcome`: the outcome function chose the status. */
  reason: "rate" | "outcome" | "bind";
}

/** One send of a delivery receipt; a refused, unanswered or lost one is sent again later. */
export interface ReceiptAttempt {
  /** The submit's message_id, as in `id:` and receipted_message_id. */
  messageId: string;
  stat: string;
  /** 1 for the first send of this receipt. */
  attempt: number;
  sessionId: number;
  sequence: number;
  sentAt: number;
  /**
   * `pending` until answered; `ok` (status 0) or `refused` (other status) with `status`;
   * `timeout` when no answer came in time; `lost` when the session closed first.
   */
  result: "pending" | "ok" | "refused" | "timeout" | "lost";
  status?: number;
  answeredAt?: number;
}

export interface PduRecord {
  direction: "in" | "out";
  sessionId: number;
  command: string;
  sequence: number;
  status: number;
  at: number;
  /** An incoming PDU the SMSC dropped unanswered (dropAfterSubmits: lost in flight). */
  dropped?: true;
  /** The fault that answered the submit `sequence` instead of a submit_sm_resp (faultSubmits). */
  fault?: SubmitFault;
}

/** The most records that fall in any window of `windowMs` ending at one of them. */
export function peakInWindow(times: readonly number[], windowMs = 1000): number {
  const sorted = [...times].sort((a, b) => a - b);
  let peak = 0;
  let start = 0;
  sorted.forEach((time, end) => {
    while ((sorted[start] ?? time) <= time - windowMs) start++;
    peak = Math.max(peak, end - start + 1);
  });
  return peak;
}
