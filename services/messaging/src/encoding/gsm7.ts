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

/** Form feed, ^ { } \ [ ~ ] | € (the euro sign is the usual surprise). */
const extension = "\f^{}\\[~]|€";

// ESC introduces the extension table; on its own it is not a character a message can carry.
const basicSet: ReadonlySet<string> = new Set([...basic].filter((c) => c !== "\u001b"));
const extensionSet: ReadonlySet<string> = new Set([...extension]);

/** Septets one character takes in GSM-7: 1 (basic), 2 (extension) or undefined (not GSM-7). */
export function gsm7Septets(character: string): 1 | 2 | undefined {
  if (basicSet.has(character)) return 1;
  if (extensionSet.has(character)) return 2;
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
