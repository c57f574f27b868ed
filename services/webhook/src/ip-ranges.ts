import { BlockList, isIP } from "node:net";

/**
 * The address ranges a webhook may never reach (unless its host is exempt), each with the
 * reason a refusal names. IPv4-mapped IPv6 is refused as a whole; NAT64 addresses (the
 * well-known 64:ff9b::/96, and RFC 8215's local-use 64:ff9b:1::/48 in the /96 format: zeros
 * between the prefix and the last 32 bits) and 6to4 (2002::/16) are judged by the IPv4 address
 * they embed. Another address in 64:ff9b:1::/48 (a longer local prefix, RFC 6052's other
 * formats) cannot be judged so, and is refused as reserved.
 */
type Reason =
  | "unspecified"
  | "loopback"
  | "private"
  | "link-local"
  | "shared (CGNAT)"
  | "cloud metadata"
  | "multicast"
  | "reserved"
  | "documentation"
  | "IPv4-mapped IPv6";

const v4: [string, number, Reason][] = [
  ["0.0.0.0", 8, "unspecified"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "shared (CGNAT)"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved"],
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "reserved"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "reserved"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"],
];

const v6: [string, number, Reason][] = [
  ["::", 128, "unspecified"],
  ["::1", 128, "loopback"],
  ["::ffff:0:0", 96, "IPv4-mapped IPv6"],
  ["::", 96, "reserved"], // IPv4-compatible (deprecated)
  ["100::", 64, "reserved"], // discard-only
  ["2001::", 32, "reserved"], // Teredo
  ["2001:10::", 28, "reserved"], // ORCHID
  ["2001:20::", 28, "reserved"], // ORCHIDv2
  ["2001:db8::", 32, "documentation"],
  ["fc00::", 7, "private"], // unique local (includes fd00:ec2::254, AWS metadata)
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "private"], // site-local (deprecated)
  ["ff00::", 8, "multicast"],
];

/** Well-known metadata endpoints, named as such even though their range also covers them. */
const metadataAddresses = new Set([
  "169.254.169.254",
  "169.254.170.2",
  "100.100.100.200",
  "fd00:ec2::254",
]);

/** One BlockList per rule, checked only against addresses of its own family, in order. */
const rules = [
  ...v4.map((r) => [...r, "ipv4"] as const),
  ...v6.map((r) => [...r, "ipv6"] as const),
].map(([network, prefix, reason, family]) => {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { reason, family, list };
});

/**
 * The IPv4 address embedded in a NAT64 (64:ff9b::/96, 64:ff9b:1::/96 inside RFC 8215's
 * 64:ff9b:1::/48) or 6to4 address; "unjudgeable" for the rest of 64:ff9b:1::/48.
 */
function embeddedIpv4(address: string): string | "unjudgeable" | undefined {
  const groups = expandIpv6(address);
  if (!groups) return undefined;
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && (groups[2] === 0 || groups[2] === 1);
  if (nat64 && groups.slice(3, 6).some((g) => g !== 0)) {
    return groups[2] === 1 ? "unjudgeable" : undefined;
  }
  const sixToFour = groups[0] === 0x2002;
  const [high, low] = nat64 ? [groups[6]!, groups[7]!] : sixToFour ? [groups[1]!, groups[2]!] : [];
  if (high === undefined || low === undefined) return undefined;
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join(".");
}

/** Eight 16-bit groups of an IPv6 address (dotted IPv4 tails included), or undefined. */
export function expandIpv6(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined;
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const bytes = dotted[1]!.split(".").map(Number);
    text = `${text.slice(0, dotted.index)}${((bytes[0]! << 8) | bytes[1]!).toString(16)}:${((bytes[2]! << 8) | bytes[3]!).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => parseInt(g, 16)));
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  const fill = tail === undefined ? [] : new Array<number>(8 - front.length - back.length).fill(0);
  const groups = [...front, ...fill, ...back];
  return groups.length === 8 ? groups : undefined;
}

/**
 * Why `address` may not be a webhook target, or undefined when it is a public unicast address.
 * Anything that is not an IP address is refused too.
 */
export function blockedReason(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return "not an IP address";
  const normalized = address.toLowerCase();
  if (metadataAddresses.has(normalized)) return "cloud metadata";
  const type = family === 4 ? "ipv4" : "ipv6";
  if (family === 6) {
    const embedded = embeddedIpv4(normalized);
    if (embedded === "unjudgeable") return "reserved";
    if (embedded) {
      const inner = blockedReason(embedded);
      return inner ? `${inner} (embedded in ${normalized})` : undefined;
    }
  }
  // (BlockList alone would also match an IPv4 address against IPv6 rules through its
  // mapped form, so each rule only sees its own family.)
  for (const rule of rules) {
    if (rule.family === type && rule.list.check(normalized, type)) return rule.reason;
  }
  return undefined;
}
