/**
 * The GSM 03.38 7-bit default alphabet (3GPP TS 23.038 §6.2.1) and its extension table
 * (§6.2.1.1). A character of the extension table is sent as ESC plus one septet, so it counts
 * two septets and its pair is never split across segments.
 */
const basic =
  "@£$¥èéùìòÇ\nØø\rÅå" +
  "Δ_ΦΓΛΩΠΨΣΘΞ\u001bÆæßÉ" +
  " !\"#¤%&'()*+,-./" +
  "0123456789:;<=>?" +
  "¡ABCDEFGHIJKLMNO" +
  "PQRSTUVWXYZÄÖÑÜ§" +
  "¿abcdefghijklmno" +
  "pqrstuvwxyzäöñüà";

const escapeCode = 0x1b;

/** Form feed, ^ { } \ [ ~ ] | € (the euro sign is the usual surprise) and their code after ESC. */
const extensionCodes: ReadonlyMap<string, number> = new Map([
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

const extension = [...extensionCodes.keys()].join("");

// ESC introduces the extension table; on its own it is not a character a message can carry.
const basicCodes: ReadonlyMap<string, number> = new Map(
  [...basic]
    .map((character, code) => [character, code] as const)
    .filter(([, code]) => code !== escapeCode),
);
const extensionCharacters: ReadonlyMap<number, string> = new Map(
  [...extensionCodes].map(([character, code]) => [code, character]),
);

/** Septets one character takes in GSM-7: 1 (basic), 2 (extension) or undefined (not GSM-7). */
export function gsm7Septets(character: string): 1 | 2 | undefined {
  if (basicCodes.has(character)) return 1;
  if (extensionCodes.has(character)) return 2;
  return undefined;
}

/** True when every character of `text` is in the GSM-7 alphabet or its extension table. */
export function isGsm7(text: string): boolean {
  for (const character of text) {
    if (gsm7Septets(character) === undefined) return false;
  }
  return true;
}

export const gsm7ExtensionCharacters = extension;

/**
 * `text` in GSM-7 unpacked, one septet per octet: what SMPP carries in `short_message` with
 * data_coding 0 (the SMSC packs it for the air). Throws on a character GSM-7 cannot carry.
 */
export function encodeGsm7(text: string): Buffer {
  const octets: number[] = [];
  for (const character of text) {
    const code = basicCodes.get(character);
    const extended = extensionCodes.get(character);
    if (code !== undefined) octets.push(code);
    else if (extended !== undefined) octets.push(escapeCode, extended);
    else throw new RangeError(`U+${character.codePointAt(0)!.toString(16)} is not in GSM-7`);
  }
  return Buffer.from(octets);
}

/**
 * The inverse of `encodeGsm7`. As TS 23.038 tells a receiver: ESC before a code the extension
 * table lacks shows the basic character, ESC ESC (reserved for a further table) and a dangling
 * ESC show a space.
 */
export function decodeGsm7(bytes: Buffer): string {
  let text = "";
  for (let index = 0; index < bytes.length; index += 1) {
    // Unpacked septets: the top bit of each octet is not part of the code.
    const code = bytes[index]! & 0x7f;
    if (code !== escapeCode) {
      text += basic[code];
      continue;
    }
    const next = index + 1 < bytes.length ? bytes[index + 1]! & 0x7f : escapeCode;
    index += 1;
    text += next === escapeCode ? " " : (extensionCharacters.get(next) ?? basic[next]);
  }
  return text;
}
