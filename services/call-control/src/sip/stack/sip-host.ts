import { isIPv4, isIPv6 } from "node:net";

/**
 * Hosts as SIP writes them (RFC 3261 §25.1, RFC 5118): a name, an IPv4 address, or an IPv6
 * address inside brackets (an IPv6 reference) wherever a port may follow, so that the port stays
 * unambiguous (`[2001:db8::1]:5060`). The network (sockets, flows) takes the bare address.
 */

/** An IPv6 address in the one form it is compared and stored in (RFC 5952: lower case, `::`). */
export function canonicalIpv6(address: string): string | undefined {
  if (!isIPv6(address)) return undefined;
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
}

/**
 * The address an IPv4-mapped IPv6 address stands for (`::ffff:192.0.2.1` → `192.0.2.1`, what a
 * dual-stack socket reports of an IPv4 peer); any other address as it is.
 */
export const unmappedAddress = (address: string): string => {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address)?.[1];
  return mapped && isIPv4(mapped) ? mapped : address;
};

/** A host for a SIP message: an IPv6 address bracketed (canonical), a name lower-cased. */
export function sipHost(host: string): string {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  const ipv6 = canonicalIpv6(bare);
  return ipv6 !== undefined ? `[${ipv6}]` : host.toLowerCase();
}

/** `host:port` as Via and URIs write it (`[2001:db8::1]:5060`); the host alone without a port. */
export const sipHostPort = (host: string, port?: number): string =>
  port === undefined ? sipHost(host) : `${sipHost(host)}:${port}`;

/**
 * The address a host names on the network: an IPv6 reference without its brackets (canonical),
 * an IPv4 address or a name as is; undefined for a bracketed text that is no IPv6 address, or
 * a bare IPv6 address (which SIP writes only in brackets, but in Via's `received`).
 */
export function hostAddress(host: string): string | undefined {
  if (host.startsWith("[") || host.endsWith("]")) {
    return host.startsWith("[") && host.endsWith("]")
      ? canonicalIpv6(host.slice(1, -1))
      : undefined;
  }
  return host.includes(":") ? undefined : host;
}

/** A DNS name or an IPv4 address (RFC 3261 §25.1 hostname / IPv4address). */
const nameOrIpv4 =
  /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.?$/;

/**
 * `host[:port]` (RFC 3261 hostport): a name, an IPv4 address or a bracketed IPv6 address, then
 * optionally `:port`. The host comes back in its network form (IPv6 without brackets, canonical).
 * A reason when it is not one, for a setting's error message.
 */
export function parseHostPort(
  text: string,
): { host: string; port: number | undefined } | { error: string } {
  const match = /^(\[[^\]]*\]|[^:[\]]*)(?::(\d{1,5}))?$/.exec(text.trim());
  if (!match) {
    return text.split(":").length > 2 && !text.includes("[")
      ? { error: "an IPv6 address must be in brackets: [2001:db8::1]:5060" }
      : { error: "must be host[:port]" };
  }
  const [, host = "", port] = match;
  if (host.startsWith("[")) {
    const address = canonicalIpv6(host.slice(1, -1));
    if (address === undefined) return { error: `${host} is no IPv6 address` };
    return { host: address, port: port === undefined ? undefined : Number(port) };
  }
  if (host === "" || host.length > 253 || !nameOrIpv4.test(host)) {
    return { error: "the host must be a name, an IPv4 address or a bracketed IPv6 address" };
  }
  if (/^[\d.]+$/.test(host) && !isIPv4(host)) return { error: `${host} is no IPv4 address` };
  return { host: host.toLowerCase(), port: port === undefined ? undefined : Number(port) };
}

/** A SIP or SIPS URI's parts (RFC 3261 §19.1.1), its host in SIP form (`[…]` for IPv6). */
export interface SipUriParts {
  scheme: "sip" | "sips";
  user: string | undefined;
  password: string | undefined;
  /** Lower case; an IPv6 reference bracketed and canonical. */
  host: string;
  /** The host's network address: an IPv6 address without brackets. */
  address: string;
  port: number | undefined;
  /** Parameter names lower-cased; null for one without a value. */
  params: Record<string, string | null>;
  headers: string | undefined;
}

const sipUri =
  /^(sips?):(?:([^\s:@>]+)(?::([^\s@>]*))?@)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::(\d{1,5}))?((?:;[^\s;?=>]+(?:=[^\s;?>]*)?)*)(?:\?(\S*))?$/i;

/**
 * A `sip:`/`sips:` URI (RFC 3261 §19.1, with RFC 5118's IPv6 references: `sip:[2001:db8::10]`
 * has no port, `sip:[2001:db8::10]:5070` has one, `sip:2001:db8::10` is no URI), or undefined.
 */
export function parseSipUri(text: string): SipUriParts | undefined {
  const match = sipUri.exec(text.trim());
  if (!match) return undefined;
  const [, scheme = "", user, password, host = "", port, params = "", headers] = match;
  const address = hostAddress(host);
  if (address === undefined) return undefined;
  if (!host.startsWith("[") && /^[\d.]+$/.test(host) && !isIPv4(host)) return undefined;
  const portNumber = port === undefined ? undefined : Number(port);
  if (portNumber !== undefined && portNumber > 65_535) return undefined;
  return {
    scheme: scheme.toLowerCase() === "sips" ? "sips" : "sip",
    user,
    password,
    host: sipHost(host),
    address,
    port: portNumber,
    params: Object.fromEntries(
      params
        .split(";")
        .slice(1)
        .map((param) => {
          const at = param.indexOf("=");
          return at < 0
            ? [param.toLowerCase(), null]
            : [param.slice(0, at).toLowerCase(), param.slice(at + 1)];
        }),
    ),
    headers,
  };
}
