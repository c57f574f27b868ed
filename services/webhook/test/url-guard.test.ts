import { describe, expect, it } from "vitest";
import { blockedReason, expandIpv6 } from "../src/ip-ranges.js";
import { guardTargetUrl } from "../src/subscription-input.js";
import {
  allowListMatches,
  checkWebhookUrl,
  parseUrl,
  UnsafeUrlError,
  type Resolver,
} from "../src/url-guard.js";

const hosts: Record<string, string[]> = {
  "public.example": ["93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"],
  "private.example": ["10.1.2.3"],
  "mixed.example": ["93.184.215.14", "192.168.1.10"],
  "metadata-alias.example": ["169.254.169.254"],
  "v6-loopback.example": ["::1"],
  "dev.internal": ["127.0.0.1"],
};
const resolve: Resolver = async (host) => {
  const found = hosts[host];
  if (!found) throw Object.assign(new Error("ENOTFOUND"), { code: "ENOTFOUND" });
  return found.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
};
const guard = { allowPrivateHosts: ["dev.internal:8080"], resolve };

async function refusal(raw: string): Promise<string> {
  const url = parseUrl(raw);
  if (!url) return "malformed";
  try {
    await checkWebhookUrl(url, guard);
  } catch (error) {
    if (error instanceof UnsafeUrlError) return error.reason;
    throw error;
  }
  return "allowed";
}

describe("blockedReason", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["127.255.1.2", "loopback"],
    ["::1", "loopback"],
    ["10.0.0.1", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.0.1", "private"],
    ["169.254.169.254", "cloud metadata"],
    ["169.254.1.1", "link-local"],
    ["100.64.0.1", "shared (CGNAT)"],
    ["100.127.255.255", "shared (CGNAT)"],
    ["100.100.100.200", "cloud metadata"],
    ["0.0.0.0", "unspecified"],
    ["224.0.0.1", "multicast"],
    ["255.255.255.255", "reserved"],
    ["::ffff:127.0.0.1", "IPv4-mapped IPv6"],
    ["::ffff:8.8.8.8", "IPv4-mapped IPv6"],
    ["::ffff:7f00:1", "IPv4-mapped IPv6"],
    ["fe80::1", "link-local"],
    ["fd00:ec2::254", "cloud metadata"],
    ["fc00::1", "private"],
    ["ff02::1", "multicast"],
    ["64:ff9b::a00:1", "private (embedded in 64:ff9b::a00:1)"],
    ["2002:7f00:1::", "loopback (embedded in 2002:7f00:1::)"],
    // RFC 8215's local-use NAT64 prefix, judged by the IPv4 address it embeds as the well-known one.
    ["64:ff9b:1::7f00:1", "loopback (embedded in 64:ff9b:1::7f00:1)"],
    ["64:ff9b:1::a9fe:a9fe", "cloud metadata (embedded in 64:ff9b:1::a9fe:a9fe)"],
    ["64:ff9b:1::c0a8:101", "private (embedded in 64:ff9b:1::c0a8:101)"],
    // Elsewhere in 64:ff9b:1::/48 (RFC 6052's /48–/64 formats): the IPv4 cannot be told, refused.
    ["64:ff9b:1:7f00:0:100::", "reserved"],
    ["64:ff9b:1:ffff::7f00:1", "reserved"],
    ["not-an-ip", "not an IP address"],
  ])("%s → %s", (address, reason) => {
    expect(blockedReason(address)).toBe(reason);
  });

  it.each([
    "8.8.8.8",
    "93.184.215.14",
    "172.32.0.1",
    "100.128.0.1",
    "2606:4700::1111",
    "64:ff9b::808:808",
    "64:ff9b:1::808:808",
  ])("%s is public", (address) => expect(blockedReason(address)).toBeUndefined());

  it("expands IPv6 with an IPv4 tail", () => {
    expect(expandIpv6("::ffff:127.0.0.1")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x7f00, 1]);
  });
});

describe("checkWebhookUrl", () => {
  it.each([
    ["https://127.0.0.1/hook", "127.0.0.1 is a loopback address"],
    ["https://[::1]/hook", "::1 is a loopback address"],
    ["https://10.2.3.4/hook", "10.2.3.4 is a private address"],
    ["https://172.16.5.4/hook", "172.16.5.4 is a private address"],
    ["https://192.168.1.1/hook", "192.168.1.1 is a private address"],
    ["https://169.254.169.254/latest/meta-data", "169.254.169.254 is a cloud metadata address"],
    ["https://100.64.1.1/hook", "100.64.1.1 is a shared (CGNAT) address"],
    ["https://[::ffff:127.0.0.1]/hook", "::ffff:7f00:1 is a IPv4-mapped IPv6 address"],
    ["https://2130706433/hook", "127.0.0.1 is a loopback address"],
    ["https://0177.0.0.1/hook", "127.0.0.1 is a loopback address"],
    ["https://0x7f.0.0.1/hook", "127.0.0.1 is a loopback address"],
    ["https://127.1/hook", "127.0.0.1 is a loopback address"],
    [
      "https://[64:ff9b:1::7f00:1]/",
      "64:ff9b:1::7f00:1 is a loopback (embedded in 64:ff9b:1::7f00:1) address",
    ],
    ["https://private.example/hook", "private.example resolves to a private address (10.1.2.3)"],
    ["https://mixed.example/hook", "mixed.example resolves to a private address (192.168.1.10)"],
    [
      "https://metadata-alias.example/",
      "metadata-alias.example resolves to a cloud metadata address (169.254.169.254)",
    ],
    ["https://v6-loopback.example/", "v6-loopback.example resolves to a loopback address (::1)"],
    ["https://metadata.google.internal/", "metadata.google.internal is a cloud metadata host"],
    ["http://public.example/hook", "the URL must use https"],
    ["ftp://public.example/hook", "the scheme ftp is not allowed; use https"],
    ["file:///etc/passwd", "the scheme file is not allowed; use https"],
    ["https://user:pw@public.example/", "the URL must not carry credentials"],
    ["https://nowhere.example/", "the host nowhere.example does not resolve"],
  ])("%s → %s", async (raw, reason) => {
    expect(await refusal(raw)).toBe(reason);
  });

  it("allows public https targets and returns every checked address", async () => {
    const target = await checkWebhookUrl(new URL("https://public.example/hook"), guard);
    expect(target.exempt).toBe(false);
    expect(target.addresses.map((a) => a.address)).toEqual(hosts["public.example"]);
  });

  it("exempts listed hosts (plain http too), but not their addresses spelled out", async () => {
    const target = await checkWebhookUrl(new URL("http://dev.internal:8080/hook"), guard);
    expect(target).toMatchObject({
      exempt: true,
      addresses: [{ address: "127.0.0.1", family: 4 }],
    });
    expect(await refusal("http://127.0.0.1:8080/hook")).toBe("the URL must use https");
  });

  it("exempts an internal origin for itself only", async () => {
    const options = { ...guard, internalOrigins: ["http://127.0.0.1:4100"] };
    await expect(
      checkWebhookUrl(new URL("http://127.0.0.1:4100/sink"), options),
    ).resolves.toMatchObject({
      exempt: true,
    });
    await expect(checkWebhookUrl(new URL("http://127.0.0.1:4101/sink"), options)).rejects.toThrow(
      UnsafeUrlError,
    );
  });

  it.each([
    // [allow-list entry, URL, exempt]
    ["127.0.0.1:8080", "http://127.0.0.1:8080/hook", true],
    ["127.0.0.1:8080", "http://127.0.0.1:5432/", false],
    ["127.0.0.1:8080", "http://2130706433:5432/", false],
    ["127.0.0.1:8080", "http://127.1:8080/", true],
    ["127.0.0.1", "http://127.0.0.1/hook", true],
    ["127.0.0.1", "http://127.0.0.1:50051/", false],
    ["127.0.0.1", "https://127.0.0.1/", true],
    ["127.0.0.1", "https://127.0.0.1:9090/", false],
    ["localhost:*", "http://localhost:4100/", true],
    ["localhost:*", "http://127.0.0.1:4100/", false],
    ["[::1]:8080", "http://[::1]:8080/", true],
    ["[::1]:8080", "http://[::1]:8081/", false],
  ])("the allow-list entry %s matches %s: %s", (entry, raw, exempt) => {
    expect(allowListMatches(entry, new URL(raw))).toBe(exempt);
  });

  it("a listed loopback host opens its listed port only, whatever the spelling", async () => {
    const options = { allowPrivateHosts: ["127.0.0.1:8080"], resolve };
    await expect(
      checkWebhookUrl(new URL("http://127.0.0.1:8080/hook"), options),
    ).resolves.toMatchObject({ exempt: true });
    for (const raw of [
      "http://127.0.0.1:5432/",
      "http://2130706433:9090/",
      "http://127.1:50051/",
    ]) {
      await expect(checkWebhookUrl(new URL(raw), options)).rejects.toThrow(
        "the URL must use https",
      );
    }
  });

  it("refuses a forbidden origin even when the allow-list or the internal origins name it", async () => {
    const sink = "http://127.0.0.1:4100";
    const options = {
      allowPrivateHosts: ["127.0.0.1:*"],
      internalOrigins: [sink],
      forbiddenOrigins: [sink],
      resolve,
    };
    await expect(checkWebhookUrl(new URL(`${sink}/sink`), options)).rejects.toThrow(
      "the URL must use https",
    );
    await expect(checkWebhookUrl(new URL("https://127.0.0.1:4100/sink"), options)).rejects.toThrow(
      "127.0.0.1 is a loopback address",
    );
  });

  it("refuses the forbidden origin by resolved address and port, however its host is spelled", async () => {
    const sink = "http://127.0.0.1:4100";
    const options = {
      allowPrivateHosts: ["localhost:*", "dev.internal:*", "127.0.0.2:*", "[::1]:*"],
      forbiddenOrigins: [sink],
      resolve: async (host: string) =>
        host === "localhost"
          ? [
              { address: "127.0.0.1", family: 4 as const },
              { address: "::1", family: 6 as const },
            ]
          : resolve(host),
    };
    for (const raw of [
      "http://localhost:4100/sink",
      "http://LOCALHOST:4100/sink",
      "http://localhost.:4100/sink",
      "http://dev.internal:4100/sink", // a listed name resolving to 127.0.0.1
      "http://127.0.0.2:4100/sink", // another loopback address on the sink's port
      "http://[::1]:4100/sink",
    ]) {
      await expect(checkWebhookUrl(new URL(raw), options), raw).rejects.toThrow(
        "the URL must use https",
      );
    }
    // The exemption still holds on every other port.
    await expect(
      checkWebhookUrl(new URL("http://localhost:4101/hook"), options),
    ).resolves.toMatchObject({ exempt: true });
    await expect(
      checkWebhookUrl(new URL("http://dev.internal:8080/hook"), options),
    ).resolves.toMatchObject({ exempt: true });
  });

  it("accepts a public host that does not resolve now (checked again at every delivery)", async () => {
    await expect(guardTargetUrl(new URL("https://nowhere.example/hook"), guard)).resolves.toBe(
      "https://nowhere.example/hook",
    );
    await expect(
      guardTargetUrl(new URL("https://private.example/hook"), guard),
    ).rejects.toMatchObject({ kind: "unsafe-webhook-url" });
  });

  it("refuses URLs that do not parse or are too long", () => {
    expect(parseUrl("not a url")).toBeUndefined();
    expect(parseUrl(`https://public.example/${"a".repeat(2100)}`)).toBeUndefined();
  });
});
