/**
 * Texts with the encoding and segment count the API must report for them, and so the number of
 * submit_sm an SMPP carrier must send. One table for both sides: the unit test checks it against
 * `segmentText` and the encoder, the SMSC test against what a real SMSC records. Every text is
 * one the API accepts (not blank, at most 1600 characters). Counts are worked out by hand from
 * 160/153 septets (extension characters take two) and 70/67 UTF-16 units.
 */
export interface SmppSegmentCase {
  name: string;
  text: string;
  encoding: "GSM-7" | "UCS-2";
  segments: number;
}

/** The first `length` characters (code points) of `pattern` repeated. */
const cycle = (pattern: string, length: number): string => {
  const characters = [...pattern];
  return Array.from({ length }, (_, index) => characters[index % characters.length]).join("");
};

/** GSM-7 basic characters only, one septet each. */
const gsm = (length: number) => cycle("Hello from Switchboard! Øre £5 @ 10:00 (ÄÖÜ) ", length);
/** Cyrillic with GSM punctuation: UCS-2, one code unit each. */
const cyrillic = (length: number) => cycle("Привет, мир! Как дела? ", length);
/** Latin, Cyrillic, Greek, CJK, Arabic, Hebrew and Devanagari, all in the BMP. */
const mixed = (length: number) => cycle("Hello Привет Γειά σου 你好 مرحبا שלום नमस्ते ", length);

export const smppSegmentCases: SmppSegmentCase[] = [
  { name: "a short text", text: "Hi there", encoding: "GSM-7", segments: 1 },
  { name: "160 septets", text: gsm(160), encoding: "GSM-7", segments: 1 },
  { name: "161 septets", text: gsm(161), encoding: "GSM-7", segments: 2 },
  { name: "306 septets (153 × 2)", text: gsm(306), encoding: "GSM-7", segments: 2 },
  { name: "307 septets", text: gsm(307), encoding: "GSM-7", segments: 3 },
  { name: "80 euro signs (160 septets)", text: "€".repeat(80), encoding: "GSM-7", segments: 1 },
  {
    // 152 + 2 > 153: the ESC pair moves whole to the second part, and 306 septets take three.
    name: "€ straddling the 153-septet boundary",
    text: gsm(152) + "€" + gsm(152),
    encoding: "GSM-7",
    segments: 3,
  },
  {
    // 459 septets would fill three parts exactly; the moved pair makes it four.
    name: "{ straddling the second 153-septet boundary",
    text: gsm(305) + "{" + gsm(152),
    encoding: "GSM-7",
    segments: 4,
  },
  {
    // 81 characters, 162 septets: 76 characters (152 septets) in the first part, 5 in the second.
    name: "only extension characters",
    text: "{}[]~^|\\€\f".repeat(8) + "€",
    encoding: "GSM-7",
    segments: 2,
  },
  { name: "Greek capitals are GSM-7", text: "ΔΦΓΛΩΠΨΣΘΞ", encoding: "GSM-7", segments: 1 },
  { name: "\\r\\n line breaks", text: "Line one\r\nLine two\r\n", encoding: "GSM-7", segments: 1 },
  { name: "70 UCS-2 units", text: cyrillic(70), encoding: "UCS-2", segments: 1 },
  { name: "71 UCS-2 units", text: cyrillic(71), encoding: "UCS-2", segments: 2 },
  { name: "36 emoji (72 units)", text: "😀".repeat(36), encoding: "UCS-2", segments: 2 },
  {
    // 66 + 2 > 67: the surrogate pair moves whole to the second part, and 134 units take three.
    name: "an emoji straddling the 67-unit boundary",
    text: cyrillic(66) + "😀" + cyrillic(66),
    encoding: "UCS-2",
    segments: 3,
  },
  {
    // 101 UCS-2 units rather than 101 septets: two segments, not one.
    name: "a GSM text with one en dash (the whole message is UCS-2)",
    text: gsm(100) + "–",
    encoding: "UCS-2",
    segments: 2,
  },
  { name: "lower-case ç is not GSM-7", text: "Ça va? ça va.", encoding: "UCS-2", segments: 1 },
  {
    // 1600 units: 23 parts of 67 and one of 59.
    name: "1600 mixed-script characters",
    text: mixed(1600),
    encoding: "UCS-2",
    segments: 24,
  },
];
