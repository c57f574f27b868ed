/**
 * The SMSC's own encoders for what it originates (MO messages, receipt texts): GSM 03.38
 * unpacked, one septet per octet (data_coding 0), and UCS-2 big-endian (data_coding 8). They are
 * written from the 3GPP TS 23.038 tables rather than taken from the `smpp` library, so that an
 * ESME decoding with the library is checked against an independent encoder.
 */

/** data_coding values the SMSC sends: 0 = SMSC default alphabet (GSM 03.38), 8 = UCS-2. */
export type DataCoding = 0 | 8;

const ESCAPE = 0x1b;

/** The default alphabet by septet; 0x1B escapes to the extension table. */
const basic =
  "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\u001bÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?" +
  "¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà";

/** The extension table: each character costs two septets, ESC then this code. */
const extension: ReadonlyMap<string, number> = new Map([
  ["\f", 0x0a],
  ["^", 0x14],
  ["{", 0x28],
  ["}", 0x29],
  ["\\", 0x2f],
  ["[", 0x3c],
  ["~", 0x3d],
  ["]", 0x3e],
  ["|", 0x40],
  ["€", 0x65],
]);

const basicCodes: ReadonlyMap<string, number> = new Map(
  [...basic].flatMap((char, code) => (code === ESCAPE ? [] : [[char, code] as const])),
);

/** Septets `char` takes in the default alphabet: 1, 2 (extension table), or 0 when it has none. */
export function gsmSeptets(char: string): 0 | 1 | 2 {
  if (basicCodes.has(char)) return 1;
  return extension.has(char) ? 2 : 0;
}

export const isGsm = (text: string): boolean => [...text].every((char) => gsmSeptets(char) > 0);

/**
 * `text` in the default alphabet, unpacked. A character outside it throws unless `replacement`
 * (a GSM character) is given: receipts quote message text, MO messages must be exact.
 */
export function encodeGsm(text: string, replacement?: string): Buffer {
  const octets: number[] = [];
  for (const char of text) {
    const code = basicCodes.get(char);
    const extended = extension.get(char);
    if (code !== undefined) octets.push(code);
    else if (extended !== undefined) octets.push(ESCAPE, extended);
    else if (replacement !== undefined) octets.push(basicCodes.get(replacement) ?? 0x3f);
    else throw new RangeError(`"${char}" is not in the GSM 03.38 alphabet; use data_coding 8`);
  }
  return Buffer.from(octets);
}

/** UTF-16BE: UCS-2 for the BMP, surrogate pairs beyond it (as handsets send emoji). */
export const encodeUcs2 = (text: string): Buffer => Buffer.from(text, "utf16le").swap16();

export const encode = (text: string, dataCoding: DataCoding): Buffer =>
  dataCoding === 8 ? encodeUcs2(text) : encodeGsm(text);

/** Units of `char`: septets for GSM, UTF-16 code units for UCS-2. */
const units = (char: string, dataCoding: DataCoding) =>
  dataCoding === 8 ? char.length : gsmSeptets(char);

export const lengthIn = (text: string, dataCoding: DataCoding): number =>
  [...text].reduce((total, char) => total + units(char, dataCoding), 0);

/** What one SMS holds alone, and each part of a concatenated one (6 octets go to the UDH). */
export const capacity = {
  0: { single: 160, part: 153 },
  8: { single: 70, part: 67 },
} as const satisfies Record<DataCoding, { single: number; part: number }>;

/**
 * `text` cut into parts of at most `perPart` units, never inside an escape sequence or a
 * surrogate pair (a handset would not split them either).
 */
export function splitText(text: string, dataCoding: DataCoding, perPart: number): string[] {
  const parts: string[] = [];
  let current = "";
  let used = 0;
  for (const char of text) {
    const size = units(char, dataCoding);
    if (used + size > perPart) {
      parts.push(current);
      current = "";
      used = 0;
    }
    current += char;
    used += size;
  }
  if (current || parts.length === 0) parts.push(current);
  return parts;
}
