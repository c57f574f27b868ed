import { promises as dns } from "node:dns";
import { isIP } from "node:net";
import type { TrunkUri } from "../../sip/trunk-uris.js";

/**
 * RFC 3263 §4 for the trunk's URIs (the client side, without NAPTR): an IP address is the
 * target itself; a name with a port is looked up by A (and AAAA); a name without one by SRV
 * (`_sip._udp.<name>`, `_sip._tcp`, `_sips._tcp`), each target of the SRV answer then by A,
 * falling back to A on the name with port 5060 when there is no SRV record. The DNS is
 * injected, so the ordering is tested without a network.
 */

/** One address a trunk URI resolved to: where its INVITEs and OPTIONS are sent. */
export interface TrunkAddress {
  /** `address:port` (`[v6]:port`): the address's key in the health table and the metric. */
  key: string;
  transport: string;
  address: string;
  port: number;
  /** The URI it came from (its Request-URI's host and port). */
  uri: TrunkUri;
}

/** SRV records of one priority (RFC 2782), each with the addresses its target resolved to. */
export interface TrunkTier {
  priority: number;
  entries: { weight: number; addresses: TrunkAddress[] }[];
}

/** One URI's resolution: its tiers in priority order, and how long it may be kept. */
export interface ResolvedTrunkUri {
  uri: TrunkUri;
  tiers: TrunkTier[];
  /** Seconds; Infinity for an IP address. */
  ttlSeconds: number;
}

/** The parts of `dns.promises` (or a `Resolver`) the resolution uses. */
export interface TrunkDns {
  resolveSrv(
    name: string,
  ): Promise<{ name: string; port: number; priority: number; weight: number }[]>;
  resolve4(name: string, options: { ttl: true }): Promise<{ address: string; ttl: number }[]>;
  resolve6(name: string, options: { ttl: true }): Promise<{ address: string; ttl: number }[]>;
  /** The system resolver (getaddrinfo: /etc/hosts too), when the DNS has no A record. */
  lookup(name: string, options: { all: true }): Promise<{ address: string; family: number }[]>;
}

export const systemDns: TrunkDns = {
  resolveSrv: (name) => dns.resolveSrv(name),
  resolve4: (name, options) => dns.resolve4(name, options),
  resolve6: (name, options) => dns.resolve6(name, options),
  lookup: (name, options) => dns.lookup(name, options),
};

/** What an answer without a TTL (the system resolver's) is kept for, at most. */
const lookupTtlSeconds = 60;

const defaultPort = (transport: string) => (transport === "tls" ? 5061 : 5060);

const srvName = (uri: TrunkUri) =>
  uri.transport === "tls" ? `_sips._tcp.${uri.host}` : `_sip._${uri.transport}.${uri.host}`;

export const addressKey = (address: string, port: number) =>
  isIP(address) === 6 ? `[${address}]:${port}` : `${address}:${port}`;

const noRecords = (error: unknown) =>
  ["ENODATA", "ENOTFOUND", "NOTFOUND", "NODATA"].includes(
    String((error as { code?: string }).code),
  );

/** The addresses of `name`: A, then AAAA when `ipv6`; the system resolver when DNS has none. */
async function addressesOf(
  name: string,
  port: number,
  uri: TrunkUri,
  resolver: TrunkDns,
  ipv6: boolean,
): Promise<{ addresses: TrunkAddress[]; ttlSeconds: number }> {
  const make = (address: string): TrunkAddress => ({
    key: addressKey(address, port),
    transport: uri.transport,
    address,
    port,
    uri,
  });
  const [v4, v6] = await Promise.all([
    resolver.resolve4(name, { ttl: true }).catch(() => []),
    ipv6 ? resolver.resolve6(name, { ttl: true }).catch(() => []) : Promise.resolve([]),
  ]);
  const records = [...v4, ...v6];
  if (records.length > 0) {
    return {
      addresses: records.map((record) => make(record.address)),
      ttlSeconds: Math.min(...records.map((record) => record.ttl)),
    };
  }
  const found = await resolver.lookup(name, { all: true }).catch(() => []);
  return {
    addresses: found
      .filter((entry) => entry.family === 4 || ipv6)
      .map((entry) => make(entry.address)),
    ttlSeconds: lookupTtlSeconds,
  };
}

/** Resolves one URI (RFC 3263 §4.1–4.2); a lookup that fails outright throws. */
export async function resolveTrunkUri(
  uri: TrunkUri,
  resolver: TrunkDns,
  options: { ipv6: boolean },
): Promise<ResolvedTrunkUri> {
  const single = (addresses: TrunkAddress[], ttlSeconds: number): ResolvedTrunkUri => ({
    uri,
    tiers: [{ priority: 0, entries: [{ weight: 0, addresses }] }],
    ttlSeconds,
  });
  if (isIP(uri.host) !== 0) {
    const port = uri.port ?? defaultPort(uri.transport);
    const address = {
      key: addressKey(uri.host, port),
      transport: uri.transport,
      address: uri.host,
      port,
      uri,
    };
    return single([address], Number.POSITIVE_INFINITY);
  }
  if (uri.port === undefined) {
    const records = await resolver.resolveSrv(srvName(uri)).catch((error: unknown) => {
      if (noRecords(error)) return [];
      throw error;
    });
    // A lone target "." says the service is not offered at this name (RFC 2782).
    if (records.length === 1 && records[0]!.name === ".") return single([], lookupTtlSeconds);
    if (records.length > 0) {
      const resolved = await Promise.all(
        records.map(async (record) => ({
          record,
          ...(await addressesOf(record.name, record.port, uri, resolver, options.ipv6)),
        })),
      );
      const priorities = [...new Set(records.map((record) => record.priority))].sort(
        (a, b) => a - b,
      );
      return {
        uri,
        tiers: priorities.map((priority) => ({
          priority,
          entries: resolved
            .filter((entry) => entry.record.priority === priority)
            .map((entry) => ({ weight: entry.record.weight, addresses: entry.addresses })),
        })),
        ttlSeconds: Math.min(...resolved.map((entry) => entry.ttlSeconds)),
      };
    }
  }
  const found = await addressesOf(
    uri.host,
    uri.port ?? defaultPort(uri.transport),
    uri,
    resolver,
    options.ipv6,
  );
  return single(found.addresses, found.ttlSeconds);
}

/**
 * The order of one request's targets (RFC 2782): tiers by priority, and within a tier the
 * records drawn one by one with probability in proportion to their weight (`random` in [0, 1)
 * times the sum, the first whose running sum reaches it; zero-weight ones first, so they are
 * drawn only by a zero); an address listed again after its first place is dropped.
 */
export function orderTargets(
  resolved: readonly ResolvedTrunkUri[],
  random: () => number = Math.random,
): TrunkAddress[] {
  const ordered: TrunkAddress[] = [];
  for (const uri of resolved) {
    for (const tier of uri.tiers) {
      const left = [...tier.entries].sort(
        (a, b) => (a.weight === 0 ? -1 : 0) - (b.weight === 0 ? -1 : 0),
      );
      while (left.length > 0) {
        const total = left.reduce((sum, entry) => sum + entry.weight, 0);
        const draw = random() * total;
        let running = 0;
        const found = left.findIndex((entry) => {
          running += entry.weight;
          return running >= draw;
        });
        const index = found < 0 ? left.length - 1 : found;
        ordered.push(...left[index]!.addresses);
        left.splice(index, 1);
      }
    }
  }
  const seen = new Set<string>();
  return ordered.filter((address) => !seen.has(address.key) && seen.add(address.key));
}
