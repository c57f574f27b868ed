import { describe, expect, it } from "vitest";
import { callControlSettings } from "../src/config.js";
import { orderTargets, resolveTrunkUri, type TrunkDns } from "../src/carrier/sip/trunk-resolver.js";
import { parseAddressBlock } from "../src/sip/trunk-allow.js";
import { parseTrunkUri } from "../src/sip/trunk-uris.js";

/** A DNS answering from tables; every question it was asked is kept. */
function fakeDns(tables: {
  srv?: Record<string, { name: string; port: number; priority: number; weight: number }[]>;
  a?: Record<string, { address: string; ttl: number }[]>;
  aaaa?: Record<string, { address: string; ttl: number }[]>;
  hosts?: Record<string, string[]>;
}): TrunkDns & { asked: string[] } {
  const asked: string[] = [];
  const answer = <T>(kind: string, table: Record<string, T[]> | undefined, name: string) => {
    asked.push(`${kind} ${name}`);
    const found = table?.[name];
    if (!found) return Promise.reject(Object.assign(new Error(`no ${kind}`), { code: "ENODATA" }));
    return Promise.resolve(found);
  };
  return {
    asked,
    resolveSrv: (name) => answer("SRV", tables.srv, name),
    resolve4: (name) => answer("A", tables.a, name),
    resolve6: (name) => answer("AAAA", tables.aaaa, name),
    lookup: (name) =>
      answer(
        "lookup",
        tables.hosts
          ? Object.fromEntries(
              Object.entries(tables.hosts).map(([host, addresses]) => [
                host,
                addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })),
              ]),
            )
          : undefined,
        name,
      ),
  };
}

/** `random` returning the given values in turn. */
const draws = (...values: number[]) => {
  let next = 0;
  return () => values[next++ % values.length]!;
};

const uri = (text: string) => parseTrunkUri(text)!;

describe("the trunk's addresses by RFC 3263 (SRV, then A; the DNS injected)", () => {
  const srvDns = () =>
    fakeDns({
      srv: {
        "_sip._udp.trunk.example.net": [
          { name: "backup.example.net", port: 5080, priority: 20, weight: 0 },
          { name: "a.example.net", port: 5060, priority: 10, weight: 60 },
          { name: "b.example.net", port: 5062, priority: 10, weight: 40 },
        ],
      },
      a: {
        "a.example.net": [{ address: "192.0.2.1", ttl: 300 }],
        "b.example.net": [
          { address: "192.0.2.2", ttl: 120 },
          { address: "192.0.2.3", ttl: 600 },
        ],
        "backup.example.net": [{ address: "198.51.100.9", ttl: 3600 }],
      },
      aaaa: { "a.example.net": [{ address: "2001:db8::1", ttl: 300 }] },
    });

  it("orders SRV targets by priority, then by weight as drawn (RFC 2782), each by its A records", async () => {
    const dns = srvDns();
    const resolved = await resolveTrunkUri(uri("sip:trunk.example.net"), dns, { ipv6: false });
    expect(dns.asked).toEqual([
      "SRV _sip._udp.trunk.example.net",
      "A backup.example.net",
      "A a.example.net",
      "A b.example.net",
    ]);
    // The lowest TTL of the A answers (SRV answers carry none through node's resolver).
    expect(resolved.ttlSeconds).toBe(120);
    const keys = (random: () => number) => orderTargets([resolved], random).map((t) => t.key);
    // Priority 10 sums 60 + 40: a draw of 0.5 × 100 = 50 falls in a's 60, of 0.7 × 100 in b's.
    expect(keys(draws(0.5, 0))).toEqual([
      "192.0.2.1:5060",
      "192.0.2.2:5062",
      "192.0.2.3:5062",
      "198.51.100.9:5080",
    ]);
    expect(keys(draws(0.7, 0))).toEqual([
      "192.0.2.2:5062",
      "192.0.2.3:5062",
      "192.0.2.1:5060",
      "198.51.100.9:5080",
    ]);
    // Over many calls, a goes first about 60 % of the time.
    let random = 0;
    const lcg = () => (random = (random * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    let aFirst = 0;
    for (let call = 0; call < 2000; call++) if (keys(lcg)[0] === "192.0.2.1:5060") aFirst += 1;
    expect(aFirst / 2000).toBeGreaterThan(0.55);
    expect(aFirst / 2000).toBeLessThan(0.65);
  });

  it("draws a zero-weight record only on a zero, so weighted ones come first", () => {
    const address = (key: string) => ({
      key,
      transport: "udp",
      address: key,
      port: 5060,
      uri: uri("sip:x"),
    });
    const resolved = [
      {
        uri: uri("sip:x"),
        ttlSeconds: 60,
        tiers: [
          {
            priority: 0,
            entries: [
              { weight: 0, addresses: [address("zero")] },
              { weight: 10, addresses: [address("ten")] },
            ],
          },
        ],
      },
    ];
    expect(orderTargets(resolved, draws(0.3)).map((t) => t.key)).toEqual(["ten", "zero"]);
    expect(orderTargets(resolved, draws(0)).map((t) => t.key)).toEqual(["zero", "ten"]);
  });

  it("keeps AAAA answers only when the socket sends IPv6, after the A ones", async () => {
    const resolved = await resolveTrunkUri(uri("sip:trunk.example.net"), srvDns(), { ipv6: true });
    expect(orderTargets([resolved], draws(0)).map((t) => t.key)).toEqual([
      "192.0.2.1:5060",
      "[2001:db8::1]:5060",
      "192.0.2.2:5062",
      "192.0.2.3:5062",
      "198.51.100.9:5080",
    ]);
  });

  it("asks no SRV for a name with a port, and none at all for an IP address", async () => {
    const dns = srvDns();
    const named = await resolveTrunkUri(uri("sip:a.example.net:5070"), dns, { ipv6: false });
    expect(orderTargets([named]).map((t) => t.key)).toEqual(["192.0.2.1:5070"]);
    expect(named.ttlSeconds).toBe(300);
    const literal = await resolveTrunkUri(uri("sip:203.0.113.4"), dns, { ipv6: false });
    expect(orderTargets([literal]).map((t) => t.key)).toEqual(["203.0.113.4:5060"]);
    expect(literal.ttlSeconds).toBe(Number.POSITIVE_INFINITY);
    expect(dns.asked).toEqual(["A a.example.net"]);
  });

  it("asks SRV by the URI's transport (_sip._tcp, _sips._tcp), TLS on 5061 without SRV", async () => {
    const dns = fakeDns({
      srv: {
        "_sip._tcp.trunk.example.net": [
          { name: "a.example.net", port: 5070, priority: 10, weight: 0 },
        ],
      },
      a: {
        "a.example.net": [{ address: "192.0.2.1", ttl: 300 }],
        "tls.example.net": [{ address: "192.0.2.8", ttl: 300 }],
      },
    });
    const tcp = await resolveTrunkUri(uri("sip:trunk.example.net;transport=tcp"), dns, {
      ipv6: false,
    });
    expect(orderTargets([tcp]).map((t) => [t.transport, t.key])).toEqual([
      ["tcp", "192.0.2.1:5070"],
    ]);
    const sips = await resolveTrunkUri(uri("sips:tls.example.net"), dns, { ipv6: false });
    expect(orderTargets([sips]).map((t) => [t.transport, t.key])).toEqual([
      ["tls", "192.0.2.8:5061"],
    ]);
    const literal = await resolveTrunkUri(uri("sip:203.0.113.4;transport=tls"), dns, {
      ipv6: false,
    });
    expect(orderTargets([literal]).map((t) => [t.transport, t.key])).toEqual([
      ["tls", "203.0.113.4:5061"],
    ]);
    expect(dns.asked).toEqual([
      "SRV _sip._tcp.trunk.example.net",
      "A a.example.net",
      "SRV _sips._tcp.tls.example.net",
      "A tls.example.net",
    ]);
  });

  it("falls back to the name's A records on 5060 without SRV, then to the system resolver", async () => {
    const dns = fakeDns({
      a: { "plain.example.net": [{ address: "192.0.2.50", ttl: 30 }] },
      hosts: { "trunk.internal": ["10.0.0.7"] },
    });
    const plain = await resolveTrunkUri(uri("sip:plain.example.net"), dns, { ipv6: false });
    expect(orderTargets([plain]).map((t) => t.key)).toEqual(["192.0.2.50:5060"]);
    const hosts = await resolveTrunkUri(uri("sip:trunk.internal:5099"), dns, { ipv6: false });
    expect(orderTargets([hosts]).map((t) => t.key)).toEqual(["10.0.0.7:5099"]);
    expect(hosts.ttlSeconds).toBe(60);
  });

  it("takes a lone SRV target '.' as the service not offered there", async () => {
    const dns = fakeDns({
      srv: { "_sip._udp.none.example.net": [{ name: ".", port: 0, priority: 0, weight: 0 }] },
    });
    const resolved = await resolveTrunkUri(uri("sip:none.example.net"), dns, { ipv6: false });
    expect(orderTargets([resolved])).toEqual([]);
  });

  it("tries the listed URIs in order, an address listed twice once", async () => {
    const dns = srvDns();
    const resolved = await Promise.all(
      ["sip:192.0.2.2:5062", "sip:trunk.example.net", "sip:198.51.100.20:5060"].map((text) =>
        resolveTrunkUri(uri(text), dns, { ipv6: false }),
      ),
    );
    expect(orderTargets(resolved, draws(0.5, 0)).map((t) => t.key)).toEqual([
      "192.0.2.2:5062",
      "192.0.2.1:5060",
      "192.0.2.3:5062",
      "198.51.100.9:5080",
      "198.51.100.20:5060",
    ]);
  });
});

describe("SIP_TRUNK_URI as a list", () => {
  const base = { NODE_ENV: "test", VOICE_CARRIER: "sip", SIP_LISTEN: "127.0.0.1:5060" };

  it("reads several URIs, the failover and OPTIONS settings, and allows every listed IPv4 host", () => {
    const parsed = callControlSettings.parse({
      ...base,
      SIP_TRUNK_URI: "sip:192.0.2.10:5070;transport=udp, sip:Trunk.Example.net ,sip:192.0.2.11",
      SIP_TRUNK_OPTIONS_INTERVAL_SECONDS: "0.5",
    });
    expect(parsed.sip.trunk).toEqual({
      uris: [
        { scheme: "sip", host: "192.0.2.10", port: 5070, transport: "udp" },
        { scheme: "sip", host: "trunk.example.net", port: undefined, transport: "udp" },
        { scheme: "sip", host: "192.0.2.11", port: undefined, transport: "udp" },
      ],
      username: undefined,
      password: undefined,
      failoverTimeoutMs: 2_000,
      optionsIntervalMs: 500,
      downAfter: 3,
      upAfter: 2,
      resolveIntervalMs: 60_000,
    });
    expect(parsed.sip.trunkAllow).toEqual([
      parseAddressBlock("192.0.2.10"),
      parseAddressBlock("192.0.2.11"),
    ]);
  });

  it("refuses a list with one bad URI, a timeout as long as Timer B, a ping interval too short", () => {
    const issues = (env: Record<string, string>) => {
      const parsed = callControlSettings.safeParse({ ...base, ...env });
      return parsed.success
        ? []
        : parsed.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`);
    };
    expect(issues({ SIP_TRUNK_URI: "sip:a.example.net, http://b" })).toEqual([
      "SIP_TRUNK_URI: must be SIP URIs: sip:host[:port][;transport=udp|tcp|tls] or sips:host[:port], comma-separated (an IPv6 host in brackets: sip:[2001:db8::1]:5060)",
    ]);
    expect(issues({ SIP_TRUNK_URI: "sip:a.example.net,sip:b:5060;transport=sctp" })).toEqual([
      "SIP_TRUNK_URI: transport must be udp, tcp or tls (sips: is tls)",
    ]);
    expect(issues({ SIP_TRUNK_URI: "sip:a.example.net;transport=tcp,sips:b.example.net" })).toEqual(
      [],
    );
    expect(
      issues({ SIP_TRUNK_URI: "sip:a.example.net", SIP_TRUNK_FAILOVER_TIMEOUT_MS: "32000" }),
    ).toEqual(["SIP_TRUNK_FAILOVER_TIMEOUT_MS: Too big: expected number to be <=30000"]);
    expect(
      issues({ SIP_TRUNK_URI: "sip:a.example.net", SIP_TRUNK_OPTIONS_INTERVAL_SECONDS: "0.1" }),
    ).toEqual(["SIP_TRUNK_OPTIONS_INTERVAL_SECONDS: must be 0 (off) or at least 0.2"]);
  });
});
