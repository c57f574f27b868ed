import type { DecodedShortMessage, PDU } from "smpp";
import type { Concat, SubmitInfo } from "./records.js";

/** IEI 0x00: concatenated SMS, 8-bit reference; 0x08: the same with a 16-bit reference. */
const CONCAT_8 = 0x00;
const CONCAT_16 = 0x08;

/**
 * The concatenation header among the UDH's information elements (each IEI, length, data, as
 * the library splits them), or undefined when there is none or it is malformed.
 */
export function concatOf(udh: readonly Buffer[] | undefined): SubmitInfo["udh"] {
  for (const element of udh ?? []) {
    if (element[0] === CONCAT_8 && element[1] === 3 && element.length >= 5) {
      return { iei: CONCAT_8, ref: element[2]!, total: element[3]!, seq: element[4]! };
    }
    if (element[0] === CONCAT_16 && element[1] === 4 && element.length >= 6) {
      return {
        iei: CONCAT_16,
        ref: element.readUInt16BE(2),
        total: element[4]!,
        seq: element[5]!,
      };
    }
  }
  return undefined;
}

const sarOf = (pdu: PDU): Concat | undefined =>
  pdu.sar_msg_ref_num === undefined
    ? undefined
    : {
        ref: pdu.sar_msg_ref_num,
        total: pdu.sar_total_segments ?? 0,
        seq: pdu.sar_segment_seqnum ?? 0,
      };

/**
 * The library decodes short_message (and message_payload) into `{ udh?, message }` when the
 * PDU has a data_coding; `message` stays a Buffer for codings it has no decoder for.
 */
function decoded(value: PDU["short_message"]): DecodedShortMessage {
  if (value === undefined) return { message: "" };
  if (typeof value === "string" || Buffer.isBuffer(value)) return { message: value };
  const { udh, message } = value; // a received udh is the list of information elements
  return { message, ...(Array.isArray(udh) && { udh }) };
}

const textOf = (message: string | Buffer) =>
  typeof message === "string" ? message : message.toString("hex");

/** A received submit_sm as the SMSC records it. */
export function readSubmit(
  pdu: PDU,
  session: { id: number; systemId: string },
  at: number,
): SubmitInfo {
  let content = decoded(pdu.short_message);
  if (content.message.length === 0 && pdu.message_payload !== undefined) {
    content = decoded(pdu.message_payload);
  }
  const udh = concatOf(content.udh);
  const sar = sarOf(pdu);
  return {
    sessionId: session.id,
    systemId: session.systemId,
    sequence: pdu.sequence_number,
    source: pdu.source_addr ?? "",
    sourceTon: pdu.source_addr_ton ?? 0,
    sourceNpi: pdu.source_addr_npi ?? 0,
    destination: pdu.destination_addr ?? "",
    destinationTon: pdu.dest_addr_ton ?? 0,
    destinationNpi: pdu.dest_addr_npi ?? 0,
    dataCoding: pdu.data_coding ?? 0,
    esmClass: pdu.esm_class ?? 0,
    registeredDelivery: pdu.registered_delivery ?? 0,
    ...(udh && { udh }),
    ...(sar && { sar }),
    text: textOf(content.message),
    at,
  };
}

/**
 * Whether registered_delivery asks for a receipt in this final state: bits 0-1 are 01 for any
 * final outcome, 10 for failures only (SMPP 3.4 5.2.17), 11 for successes only (SMPP 5.0;
 * reserved in 3.4); 00 asks for none.
 */
export function receiptRequested(registeredDelivery: number, delivered: boolean): boolean {
  const wanted = registeredDelivery & 0x03;
  return wanted === 0x01 || (wanted === 0x02 && !delivered) || (wanted === 0x03 && delivered);
}
