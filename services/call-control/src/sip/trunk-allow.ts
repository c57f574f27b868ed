import { isIPv4 } from "node:net";
import { canonicalIpv6, unmappedAddress } from "./stack/sip-host.js";

/** An IPv4 or IPv6 address or CIDR block, as SIP_TRUNK_ALLOW and SIP_PATH_ALLOW list them. */
export interface AddressBlock {
  family: 4 | 6;
  /** The block's first address as a number (32 or 128 bits). */
  base: bigint;
  bits: number;
}

/**
 * The address as a number with its family (an IPv4-mapped IPv6 address is its IPv4 address), or
 * undefined when it is no IP address.
 */
export function addressNumber(address: string): { family: 4 | 6; value: bigint } | undefined {
  const unmapped = unmappedAddress(address);
  if (isIPv4(unmapped)) {
    const value = unmapped.split(".").reduce((sum, octet) => sum * 256n + BigInt(octet), 0n);
    return { family: 4, value };
  }
  const canonical = canonicalIpv6(unmapped);
  if (canonical === undefined) return undefined;
  // Expanded to eight groups: `::` stands for as many zero groups as are missing.
  const [head = "", tail] = canonical.split("::");
  const groupsOf = (part: string) => (part === "" ? [] : part.split(":"));
  let groups = groupsOf(head);
  if (tail !== undefined) {
    const rest = groupsOf(tail);
    groups = [...groups, ...Array<string>(8 - groups.length - rest.length).fill("0"), ...rest];
  }
  // An embedded dotted quad (`::ffff:1.2.3.4` is handled above; URL writes others in hex).
  const value = groups.reduce((sum, group) => (sum << 16n) + BigInt(`0x${group}`), 0n);
  return { family: 6, value };
}

const widthOf = (family: 4 | 6) => (family === 4 ? 32 : 128);
const prefixOf = (value: bigint, bits: number, width: number) =>
  (value >> BigInt(width - bits)) << BigInt(width - bits);

/** `a.b.c.d[/n]` (n ≤ 32) or `2001:db8::[/n]` (n ≤ 128, brackets allowed), or undefined. */
export function parseAddressBlock(text: string): AddressBlock | undefined {
  const [written, prefix, ...rest] = text.trim().split("/");
  if (rest.length > 0 || written === undefined) return undefined;
  const address = /^\[.*\]$/.test(written) ? written.slice(1, -1) : written;
  const number = addressNumber(address);
  if (number === undefined) return undefined;
  const width = widthOf(number.family);
  if (prefix !== undefined && !/^\d{1,3}$/.test(prefix)) return undefined;
  const bits = prefix === undefined ? width : Number(prefix);
  if (bits > width) return undefined;
  return { family: number.family, base: prefixOf(number.value, bits, width), bits };
}

/** The block of exactly one address, or undefined when it is no IP address. */
export function addressBlock(address: string): AddressBlock | undefined {
  const number = addressNumber(address);
  return number && { family: number.family, base: number.value, bits: widthOf(number.family) };
}

/** True when the source address is inside one of the blocks (of its family). */
export function allowedSource(blocks: readonly AddressBlock[], address: string): boolean {
  const number = addressNumber(address);
  if (number === undefined) return false;
  const width = widthOf(number.family);
  return blocks.some(
    (block) =>
      block.family === number.family && prefixOf(number.value, block.bits, width) === block.base,
  );
}
