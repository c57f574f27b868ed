/**
 * The TNAuthList certificate extension of RFC 8226 (id-pe-TNAuthList, 1.3.6.1.5.5.7.1.26),
 * carrying the service provider code (SPC) a STIR/SHAKEN certificate is issued to:
 *   TNAuthorizationList ::= SEQUENCE SIZE (1..MAX) OF TNEntry
 *   TNEntry ::= CHOICE { spc [0] ServiceProviderCode, ... }   -- EXPLICIT TAGS
 *   ServiceProviderCode ::= IA5String
 */
export const tnAuthListOid = "1.3.6.1.5.5.7.1.26";

function derLength(length: number): number[] {
  if (length < 0x80) return [length];
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest >>= 8) bytes.unshift(rest & 0xff);
  return [0x80 | bytes.length, ...bytes];
}

const tlv = (tag: number, content: number[]): number[] => [
  tag,
  ...derLength(content.length),
  ...content,
];

/** DER of a TNAuthorizationList with one SPC entry. */
export function tnAuthListDer(serviceProviderCode: string): Uint8Array {
  if (!/^[\x20-\x7e]{1,64}$/.test(serviceProviderCode)) {
    throw new TypeError("the service provider code must be 1–64 printable ASCII characters");
  }
  const ia5 = tlv(0x16, [...Buffer.from(serviceProviderCode, "ascii")]);
  const spc = tlv(0xa0, ia5);
  return Uint8Array.from(tlv(0x30, spc));
}
