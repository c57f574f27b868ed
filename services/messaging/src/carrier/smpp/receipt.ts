import type { ReceiptStatus } from "../carrier.js";

/** A delivery receipt as the SMSC reports it, before it is applied. */
export interface SmscReceipt {
  messageId: string;
  /** The final state, or undefined for an intermediate one (ENROUTE, ACCEPTD): nothing to apply. */
  status: ReceiptStatus | undefined;
  /** The SMSC's own words: `stat:` of the text or the message_state TLV's name. */
  stat: string;
  error?: string;
}

/** SMPP 3.4 §5.2.28 message_state values, by the `stat:` word receipts spell them with. */
const messageStates: Record<number, string> = {
  1: "ENROUTE",
  2: "DELIVRD",
  3: "EXPIRED",
  4: "DELETED",
  5: "UNDELIV",
  6: "ACCEPTD",
  7: "UNKNOWN",
  8: "REJECTD",
};

/**
 * The final state each `stat:` moves a message to (docs/api.md "Carriers"): delivered,
 * undelivered, expired; an SMSC that deleted, rejected or lost track of a message failed it.
 */
const finalStates: Record<string, ReceiptStatus> = {
  DELIVRD: "delivered",
  UNDELIV: "undelivered",
  EXPIRED: "expired",
  DELETED: "failed",
  REJECTD: "failed",
  UNKNOWN: "failed",
};

/**
 * Reads a delivery receipt (esm_class bits 2–5 = 0x04): the `receipted_message_id` and
 * `message_state` TLVs when present (SMPP 3.4 §5.3.2.12), else the de-facto text of Appendix B,
 * `id:IIIIIIIIII sub:SSS dlvrd:DDD submit date:YYMMDDhhmm done date:YYMMDDhhmm stat:DDDDDDD err:E text:…`.
 * Undefined when the PDU names no message.
 */
export function readReceipt(fields: {
  receipted_message_id?: unknown;
  message_state?: unknown;
  text: string;
}): SmscReceipt | undefined {
  const text = fields.text;
  const textId = /(?:^|\s)id:(\S+)/i.exec(text)?.[1];
  const textStat = /(?:^|\s)stat:(\S+)/i.exec(text)?.[1]?.toUpperCase();
  const error = /(?:^|\s)err:(\S+)/i.exec(text)?.[1];
  const messageId =
    typeof fields.receipted_message_id === "string" && fields.receipted_message_id !== ""
      ? fields.receipted_message_id
      : textId;
  const stat =
    typeof fields.message_state === "number"
      ? (messageStates[fields.message_state] ?? "UNKNOWN")
      : textStat;
  if (!messageId || !stat) return undefined;
  return { messageId, status: finalStates[stat], stat, ...(error ? { error } : {}) };
}
