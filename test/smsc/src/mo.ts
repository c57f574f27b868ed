import smpp, { type PDUFields } from "smpp";
import { capacity, encode, isGsm, lengthIn, splitText, type DataCoding } from "./alphabet.js";

/** A mobile-originated message for the SMSC to deliver to the ESME. */
export interface MoRequest {
  /** The handset: `+E.164` goes out as TON 1 (international), NPI 1, without the "+". */
  from: string;
  /** Our number (or short code), addressed the same way. */
  to: string;
  text: string;
  /**
   * `single`: one deliver_sm (text past one SMS goes in message_payload); `udh`: concatenated
   * with a UDH (IEI 0x00, esm_class 0x40); `sar`: concatenated with the sar_* TLVs. Default:
   * `single` when the text fits one SMS, else `udh`.
   */
  parts?: "single" | "udh" | "sar";
  /** The order parts are sent in, as 0-based part indexes: [2, 0, 1]. Default in order. */
  order?: number[];
  /** Default: 0 (GSM 03.38) when every character is in the alphabet, else 8 (UCS-2). */
  dataCoding?: DataCoding;
}

/** How an address goes on the wire: +E.164 international, digits unknown, else alphanumeric. */
export function addressOf(number: string): { ton: number; npi: number; address: string } {
  if (/^\+\d+$/.test(number)) return { ton: 1, npi: 1, address: number.slice(1) };
  if (/^\d+$/.test(number)) return { ton: 0, npi: 1, address: number };
  return { ton: 5, npi: 0, address: number };
}

/**
 * The deliver_sm fields of `request`, in the order they are to be sent. `ref` is the
 * concatenation reference (8 bits of it in a UDH, 16 in sar_msg_ref_num).
 */
export function moFields(request: MoRequest, ref: number): PDUFields[] {
  const dataCoding = request.dataCoding ?? (isGsm(request.text) ? 0 : 8);
  const limits = capacity[dataCoding];
  const fits = lengthIn(request.text, dataCoding) <= limits.single;
  const parts = request.parts ?? (fits ? "single" : "udh");
  const from = addressOf(request.from);
  const to = addressOf(request.to);
  const base: PDUFields = {
    source_addr_ton: from.ton,
    source_addr_npi: from.npi,
    source_addr: from.address,
    dest_addr_ton: to.ton,
    dest_addr_npi: to.npi,
    destination_addr: to.address,
    esm_class: 0,
    data_coding: dataCoding,
  };
  // Buffers pass through the library's message filter untouched: what is sent is ours.
  if (parts === "single") {
    const octets = encode(request.text, dataCoding);
    return inOrder(
      [
        fits
          ? { ...base, short_message: octets }
          : { ...base, short_message: Buffer.alloc(0), message_payload: octets },
      ],
      request.order,
    );
  }
  const texts = splitText(request.text, dataCoding, limits.part);
  const total = texts.length;
  if (total > 255) throw new RangeError(`${total} parts: a concatenated SMS has at most 255`);
  const fields = texts.map((text, index): PDUFields => {
    const octets = encode(text, dataCoding);
    if (parts === "sar") {
      return {
        ...base,
        short_message: octets,
        sar_msg_ref_num: ref & 0xffff,
        sar_total_segments: total,
        sar_segment_seqnum: index + 1,
      };
    }
    const udh = Buffer.from([0x05, 0x00, 0x03, ref & 0xff, total, index + 1]);
    return {
      ...base,
      esm_class: smpp.ESM_CLASS.UDH_INDICATOR,
      short_message: Buffer.concat([udh, octets]),
    };
  });
  return inOrder(fields, request.order);
}

function inOrder(fields: PDUFields[], order: readonly number[] | undefined): PDUFields[] {
  if (!order) return fields;
  const valid =
    order.length === fields.length &&
    new Set(order).size === order.length &&
    order.every((index) => Number.isInteger(index) && index >= 0 && index < fields.length);
  if (!valid) {
    throw new RangeError(
      `order ${JSON.stringify(order)} is not a permutation of ${fields.length} parts`,
    );
  }
  return order.map((index) => fields[index]!);
}
