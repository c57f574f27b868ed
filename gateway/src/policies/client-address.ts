import { isIPv4, isIPv6 } from "node:net";
import type { Request } from "express";

/**
 * The partition of the address buckets: an IPv4 address, or the /64 prefix of an IPv6 address
 * (one host usually owns a whole /64, so per-address IPv6 buckets would be free to multiply).
 * IPv4-mapped IPv6 (`::ffff:1.2.3.4`) counts as its IPv4 address. `req.ip` honours the
 * `trust proxy` setting (TRUST_PROXY), so behind a load balancer it is the client's address.
 */
export function clientAddress(req: Request): string {
  return addressPartition(req.ip ?? req.socket.remoteAddress ?? "unknown");
}

export function addressPartition(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1] as string;
  if (isIPv4(address)) return address;
  if (isIPv6(address)) return `${expandIPv6(address).slice(0, 4).join(":")}::/64`;
  return "unknown";
}

/** The eight 16-bit groups of an IPv6 address, lower-case, without zone id. */
function expandIPv6(address: string): string[] {
  const [head = "", tail] = address.split("%")[0]!.toLowerCase().split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  // An embedded IPv4 tail (::1.2.3.4) takes two groups; only its prefix matters here.
  const missing = 8 - left.length - right.length;
  const groups =
    tail === undefined ? left : [...left, ...Array<string>(missing).fill("0"), ...right];
  return groups.map((group) =>
    group.includes(".") ? group : (parseInt(group, 16) || 0).toString(16),
  );
}
