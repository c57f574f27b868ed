import { decodeGsm7, encodeGsm7 } from "../../encoding/gsm7.js";
import { splitSegments } from "../../encoding/segments.js";

/** esm_class bit telling the SMSC that `short_message` starts with a user data header. */
export const udhIndicator = 0x40;

export interface ShortMessages {
  /** SMPP data_coding: 0 GSM-7 (unpacked, the SMSC default alphabet), 8 UCS-2. */
  dataCoding: 0 | 8;
  esmClass: number;
  /** One `short_message` per submit_sm, in order. */
  parts: Buffer[];
}

export interface ReceivedShortMessage {
  text: string;
  concat?: { reference: number; total: number; sequence: number };
}

const utf16be = (text: string): Buffer => Buffer.from(text, "utf16le").swap16();

/**
 * The `short_message` of each submit_sm for `text`: exactly the segments the API counted
 * (`splitSegments`), so a message is billed for what it sends. Several parts each start with the
 * 8-bit-reference concatenation header (TS 23.040 §9.2.3.24.1); `reference` tells this
 * message's parts apart from another's to the same handset.
 */
export function encodeShortMessages(text: string, reference: number): ShortMessages {
  const { encoding, parts } = splitSegments(text);
  const dataCoding = encoding === "GSM-7" ? 0 : 8;
  const encode = dataCoding === 0 ? encodeGsm7 : utf16be;
  if (parts.length === 1) return { dataCoding, esmClass: 0, parts: [encode(parts[0]!)] };
  if (parts.length > 255) throw new RangeError(`${parts.length} segments do not fit a UDH`);
  return {
    dataCoding,
    esmClass: udhIndicator,
    parts: parts.map((part, index) =>
      Buffer.concat([
        Buffer.from([0x05, 0x00, 0x03, reference & 0xff, parts.length, index + 1]),
        encode(part),
      ]),
    ),
  };
}

/**
 * One received `short_message` (deliver_sm, or a recorded submit_sm): its text and, when its
 * header says it is one part of several, which part. Codings we do not know decode as Latin-1
 * so that nothing is lost silently.
 */
export function decodeShortMessage(
  dataCoding: number,
  bytes: Buffer,
  udhPresent: boolean,
): ReceivedShortMessage {
  let body = bytes;
  let concat: ReceivedShortMessage["concat"];
  if (udhPresent && bytes.length > 0) {
    const end = Math.min(1 + bytes[0]!, bytes.length);
    for (let at = 1; at + 1 < end; at += 2 + bytes[at + 1]!) {
      const element = bytes.subarray(at + 2, Math.min(at + 2 + bytes[at + 1]!, end));
      if (bytes[at] === 0x00 && element.length === 3) {
        concat = { reference: element[0]!, total: element[1]!, sequence: element[2]! };
      } else if (bytes[at] === 0x08 && element.length === 4) {
        concat = { reference: element.readUInt16BE(0), total: element[2]!, sequence: element[3]! };
      }
    }
    body = bytes.subarray(end);
  }
  return { text: decodeText(dataCoding, body), ...(concat && { concat }) };
}

function decodeText(dataCoding: number, bytes: Buffer): string {
  switch (dataCoding) {
    case 0:
      return decodeGsm7(bytes);
    case 1:
      return bytes.toString("ascii");
    case 8:
      // Whole code units only: a stray last octet is dropped.
      return Buffer.from(bytes.subarray(0, bytes.length & ~1))
        .swap16()
        .toString("utf16le");
    default:
      return bytes.toString("latin1");
  }
}
