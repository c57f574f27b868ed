import { describe, expect, it } from "vitest";
import { gsm7ExtensionCharacters, isGsm7 } from "../src/encoding/gsm7.js";
import { messageSegments, segmentText } from "../src/encoding/segments.js";

const a = (n: number) => "a".repeat(n);
const zh = (n: number) => "ж".repeat(n);
const euro = (n: number) => "€".repeat(n);
const smile = (n: number) => "😀".repeat(n);

describe("encoding and segments", () => {
  it.each([
    ["one character", "a", "GSM-7", 1, 1],
    ["160 GSM-7 characters", a(160), "GSM-7", 160, 1],
    ["161 GSM-7 characters", a(161), "GSM-7", 161, 2],
    ["306 GSM-7 characters", a(306), "GSM-7", 306, 2],
    ["307 GSM-7 characters", a(307), "GSM-7", 307, 3],
    ["459 GSM-7 characters", a(459), "GSM-7", 459, 3],
    ["1530 GSM-7 characters", a(1530), "GSM-7", 1530, 10],
    ["80 euro signs (160 septets)", euro(80), "GSM-7", 160, 1],
    ["81 euro signs (162 septets)", euro(81), "GSM-7", 162, 2],
    ["159 letters + one extension character", a(159) + "{", "GSM-7", 161, 2],
    ["152 + € + 152: the escape pair is not split", a(152) + "€" + a(152), "GSM-7", 306, 3],
    ["every extension character counts two", gsm7ExtensionCharacters, "GSM-7", 20, 1],
    ["70 UCS-2 characters", zh(70), "UCS-2", 70, 1],
    ["71 UCS-2 characters", zh(71), "UCS-2", 71, 2],
    ["134 UCS-2 characters", zh(134), "UCS-2", 134, 2],
    ["135 UCS-2 characters", zh(135), "UCS-2", 135, 3],
    ["one non-GSM character switches the whole message", a(100) + "ж", "UCS-2", 101, 2],
    ["lower-case ç is not GSM-7 (only Ç is)", "ça", "UCS-2", 2, 1],
    ["35 emoji (70 code units)", smile(35), "UCS-2", 70, 1],
    ["36 emoji (72 code units)", smile(36), "UCS-2", 72, 2],
    ["66 + emoji + 66: a surrogate pair is not split", a(66) + "😀" + a(66), "UCS-2", 134, 3],
    ["an emoji in a GSM-7 text", "Hello 👋", "UCS-2", 8, 1],
  ])("%s", (_label, text, encoding, units, segments) => {
    expect(segmentText(text)).toEqual({ encoding, units, segments });
  });

  it("knows the basic table, including Greek capitals and the accented letters", () => {
    expect(
      isGsm7("@£$¥èéùìòÇØøÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ÄÖÑÜ§¿äöñüà"),
    ).toBe(true);
    expect(isGsm7("\n\r")).toBe(true);
    expect(isGsm7("\u001b")).toBe(false);
    expect(isGsm7("`")).toBe(false);
    expect(isGsm7("á")).toBe(false);
  });

  it("counts MMS and RCS as one message whatever the length", () => {
    expect(messageSegments("sms", a(400))).toEqual({ encoding: "GSM-7", segments: 3 });
    expect(messageSegments("mms", a(400))).toEqual({ encoding: "GSM-7", segments: 1 });
    expect(messageSegments("rcs", zh(400))).toEqual({ encoding: "UCS-2", segments: 1 });
  });
});
