import type smpp from "smpp";
import type { InboundPart } from "../carrier.js";

/** E.164 from an SMPP address: international numbers travel without their '+'. */
const e164 = (addr: unknown): string => {
  const value = typeof addr === "string" ? addr.trim() : "";
  return /^\d+$/.test(value) ? `+${value}` : value;
};

const textOf = (value: unknown): string => {
  if (typeof value === "string") return value;
  if (Buffer.isBuffer(value)) return value.toString("latin1");
  if (value && typeof value === "object" && "message" in value) return textOf(value.message);
  return "";
};

const udhOf = (value: unknown): Buffer[] =>
  value && typeof value === "object" && "udh" in value && Array.isArray(value.udh)
    ? (value.udh as Buffer[])
    : [];

/**
 * The concatenation of a part: a UDH information element (IEI 0x00, 8-bit reference, or 0x08,
 * 16-bit; 3GPP TS 23.040 §9.2.3.24.1 and .8), else the SAR TLVs (SMPP 3.4 §5.3.2.22–24).
 */
function concatOf(pdu: smpp.PDU, udh: Buffer[]): InboundPart["concat"] {
  for (const element of udh) {
    if (element[0] === 0x00 && element.length >= 5) {
      return { reference: element[2]!, total: element[3]!, sequence: element[4]! };
    }
    if (element[0] === 0x08 && element.length >= 6) {
      return { reference: element.readUInt16BE(2), total: element[4]!, sequence: element[5]! };
    }
  }
  const {
    sar_msg_ref_num: reference,
    sar_total_segments: total,
    sar_segment_seqnum: sequence,
  } = pdu;
  if (typeof reference === "number" && typeof total === "number" && typeof sequence === "number") {
    return { reference, total, sequence };
  }
  return undefined;
}

/**
 * A deliver_sm as an inbound part: addresses as E.164, the text as the library decoded it
 * (GSM 03.38 for data_coding 0, UCS-2 for 8) from short_message or message_payload, and its
 * place in a concatenated message. A single-part "concatenation" is a whole message.
 */
export function readInbound(pdu: smpp.PDU): InboundPart {
  const body = pdu.message_payload ?? pdu.short_message;
  const concat = concatOf(pdu, udhOf(pdu.short_message));
  return {
    from: e164(pdu.source_addr),
    to: e164(pdu.destination_addr),
    text: textOf(body),
    ...(concat && concat.total > 1 ? { concat } : {}),
  };
}
