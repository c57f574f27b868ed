/** An IPv4 address or CIDR block, as SIP_TRUNK_ALLOW lists them. */
export interface Ipv4Block {
  base: number;
  bits: number;
}

const ipv4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/** The address as a 32-bit number, or undefined when it is no dotted-quad IPv4 address. */
export function ipv4Number(address: string): number | undefined {
  const match = ipv4.exec(address.replace(/^::ffff:/i, ""));
  if (!match) return undefined;
  const octets = match.slice(1).map(Number);
  if (octets.some((octet) => octet > 255)) return undefined;
  return octets.reduce((value, octet) => value * 256 + octet, 0);
}

/** `a.b.c.d` or `a.b.c.d/n` (0 ≤ n ≤ 32), or undefined. */
export function parseIpv4Block(text: string): Ipv4Block | undefined {
  const [address, prefix, ...rest] = text.trim().split("/");
  if (rest.length > 0 || address === undefined) return undefined;
  const base = ipv4Number(address);
  if (base === undefined) return undefined;
  if (prefix !== undefined && !/^\d{1,2}$/.test(prefix)) return undefined;
  const bits = prefix === undefined ? 32 : Number(prefix);
  if (bits > 32) return undefined;
  return { base: base - (base % 2 ** (32 - bits)), bits };
}

/** True when the source address is inside one of the blocks. */
export function allowedSource(blocks: readonly Ipv4Block[], address: string): boolean {
  const value = ipv4Number(address);
  if (value === undefined) return false;
  return blocks.some((block) => value - (value % 2 ** (32 - block.bits)) === block.base);
}
