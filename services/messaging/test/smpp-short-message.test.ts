import {
  decodeShortMessage,
  encodeShortMessages,
  udhIndicator,
} from "../src/carrier/smpp/short-message.js";
import { decodeGsm7, encodeGsm7, gsm7ExtensionCharacters } from "../src/encoding/gsm7.js";
import { segmentText, splitSegments } from "../src/encoding/segments.js";
import { smppSegmentCases } from "@switchboard/test-support/smpp-segment-cases";
import { describe, expect, it } from "vitest";

const hex = (octets: Buffer | number[]) => Buffer.from(octets).toString("hex");
const octets = (spaced: string) => Buffer.from(spaced.replaceAll(" ", ""), "hex");

/**
 * Octets a part takes on the air (TP-UD, at most 140): UCS-2 as sent, but SMPP carries GSM-7
 * unpacked, one septet per octet, so here the septets are packed after the header, which is
 * padded to a septet boundary.
 */
function airOctets(dataCoding: number, part: Buffer, udh: boolean): number {
  if (dataCoding === 8) return part.length;
  const headerOctets = udh ? part[0]! + 1 : 0;
  const septets = Math.ceil((headerOctets * 8) / 7) + part.length - headerOctets;
  return Math.ceil((septets * 7) / 8);
}

describe("the submit_sm parts of a text are the segments the API counts", () => {
  const reference = 0x1ab;

  it.each(smppSegmentCases)("$name", ({ text, encoding, segments }) => {
    expect(segmentText(text)).toMatchObject({ encoding, segments });

    const { dataCoding, esmClass, parts } = encodeShortMessages(text, reference);
    expect(parts).toHaveLength(segments);
    expect(dataCoding).toBe(encoding === "GSM-7" ? 0 : 8);
    expect(esmClass).toBe(segments > 1 ? udhIndicator : 0);

    const texts = parts.map((part, index) => {
      if (segments > 1) {
        expect(hex(part.subarray(0, 6))).toBe(hex([0x05, 0x00, 0x03, 0xab, segments, index + 1]));
      }
      // short_message holds at most 254 octets; the air interface, 140.
      expect(part.length).toBeLessThanOrEqual(254);
      expect(airOctets(dataCoding, part, segments > 1)).toBeLessThanOrEqual(140);
      const decoded = decodeShortMessage(dataCoding, part, (esmClass & udhIndicator) !== 0);
      expect(decoded.concat).toEqual(
        segments > 1 ? { reference: 0xab, total: segments, sequence: index + 1 } : undefined,
      );
      return decoded.text;
    });
    expect(texts).toEqual(splitSegments(text).parts);
    expect(texts.join("")).toBe(text);
  });

  it("sends one empty part for an empty text", () => {
    expect(encodeShortMessages("", 1)).toEqual({ dataCoding: 0, esmClass: 0, parts: [octets("")] });
  });

  it("refuses a text of more parts than the header can number", () => {
    expect(() => encodeShortMessages("a".repeat(153 * 256), 1)).toThrow(RangeError);
    expect(encodeShortMessages("a".repeat(153 * 255), 1).parts).toHaveLength(255);
  });

  it("sends UCS-2 as UTF-16BE, an emoji as its surrogate pair", () => {
    expect(hex(encodeShortMessages("ж😀", 1).parts[0]!)).toBe("0436d83dde00");
  });
});

describe("GSM-7 unpacked", () => {
  it.each([
    ["@£$", "00 01 02"],
    ["€", "1b 65"],
    ["[x]", "1b 3c 78 1b 3e"],
    ["\f^{}\\[~]|€", "1b0a 1b14 1b28 1b29 1b2f 1b3c 1b3d 1b3e 1b40 1b65"],
    ["Hello\r\n", "48 65 6c 6c 6f 0d 0a"],
    ["ΔΦΓΛΩΠΨΣΘΞ", "10 12 13 14 15 16 17 18 19 1a"],
    ["ÄÖÑÜ§¿äöñüà", "5b 5c 5d 5e 5f 60 7b 7c 7d 7e 7f"],
  ])("%j is %s", (text, spaced) => {
    expect(hex(encodeGsm7(text))).toBe(hex(octets(spaced)));
    expect(decodeGsm7(octets(spaced))).toBe(text);
  });

  it("takes every extension character as ESC and one septet", () => {
    expect(encodeGsm7(gsm7ExtensionCharacters)).toHaveLength(2 * gsm7ExtensionCharacters.length);
  });

  it("refuses a character GSM-7 lacks, ESC itself included", () => {
    expect(() => encodeGsm7("ж")).toThrow(RangeError);
    expect(() => encodeGsm7("\u001b")).toThrow(RangeError);
  });

  it("falls back as TS 23.038 says for escapes it does not know", () => {
    expect(decodeGsm7(octets("1b 41"))).toBe("A");
    expect(decodeGsm7(octets("1b 1b 41"))).toBe(" A");
    expect(decodeGsm7(octets("41 1b"))).toBe("A ");
  });
});

describe("a received short_message", () => {
  it("reads a 16-bit concatenation reference", () => {
    expect(decodeShortMessage(0, octets("06 08 04 12 34 03 02 48 69"), true)).toEqual({
      text: "Hi",
      concat: { reference: 0x1234, total: 3, sequence: 2 },
    });
  });

  it("skips the elements it does not know", () => {
    // Application port addressing (IEI 0x05) before the concatenation header.
    expect(
      decodeShortMessage(8, octets("0b 05 04 0b 84 23 f0 00 03 07 02 01 00 48"), true),
    ).toEqual({ text: "H", concat: { reference: 7, total: 2, sequence: 1 } });
    expect(decodeShortMessage(0, octets("04 05 02 0b 84 48 69"), true)).toEqual({ text: "Hi" });
  });

  it("takes the octets as text when no header is flagged", () => {
    expect(decodeShortMessage(0, octets("05 00 03"), false)).toEqual({ text: "é@¥" });
  });

  it.each([
    [0, "48 1b 65", "H€"],
    [1, "48 69 7e", "Hi~"],
    [3, "43 61 66 e9", "Café"],
    [8, "04 1f 04 40 d8 3d de 00", "Пр😀"],
    [4, "ff 41", "ÿA"],
  ])("decodes data_coding %i", (dataCoding, spaced, text) => {
    expect(decodeShortMessage(dataCoding, octets(spaced), false)).toEqual({ text });
  });
});
