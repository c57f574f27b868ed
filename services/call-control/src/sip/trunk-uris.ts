import { hostAddress, sipHostPort } from "./stack/sip-host.js";

/**
 * SIP_TRUNK_URI: one SIP URI of the carrier's trunk or several, comma-separated, tried in the
 * order written. Each names a host (an IPv4 address, an IPv6 address in brackets, RFC 5118, or a
 * DNS name, resolved per RFC 3263 by
 * `../carrier/sip/trunk-resolver.ts`), an optional port (without one a DNS name is looked up by
 * SRV) and optional parameters (`transport`: `udp`, `tcp` or `tls`; a `sips:` URI is TLS).
 */
export interface TrunkUri {
  /** `sips` when the URI is one (its transport is then `tls`). */
  scheme: "sip" | "sips";
  /**
   * The host: a name or an IPv4 address lower-cased, an IPv6 address without its brackets
   * (canonical): the address the network takes. `trunkHostPort` writes it for a Request-URI.
   */
  host: string;
  /** The port written in the URI; undefined: SRV (a name) or 5060. */
  port: number | undefined;
  /** The `transport` parameter, lower-cased (`udp` unless written; `tls` for `sips:`). */
  transport: string;
}

/** `sip:` or `sips:`, `host[:port]`, optional parameters. */
const trunkUri =
  /^(sips?):([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::(\d{1,5}))?((?:;[A-Za-z0-9_.!~*'()%+-]+(?:=[A-Za-z0-9_.!~*'()%+-]+)?)*)$/i;

/** At most this many URIs: a list is a handful of addresses, not a directory. */
export const maxTrunkUris = 16;

/** The URIs of the list, trimmed (empty items dropped). */
export const trunkUriTexts = (value: string): string[] =>
  value
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);

/** One URI of the list, or undefined when it is no `sip[s]:host[:port][;params]`. */
export function parseTrunkUri(text: string): TrunkUri | undefined {
  const match = trunkUri.exec(text);
  if (!match) return undefined;
  const scheme = match[1]!.toLowerCase() === "sips" ? "sips" : "sip";
  const transport = /;transport=([^;]*)/i.exec(match[4] ?? "")?.[1];
  const host = hostAddress(match[2]!);
  if (host === undefined) return undefined;
  return {
    scheme,
    host: host.toLowerCase(),
    port: match[3] ? Number(match[3]) : undefined,
    transport: (transport || (scheme === "sips" ? "tls" : "udp")).toLowerCase(),
  };
}

/** The transports a trunk URI may name: `sips:` only TLS. */
export const trunkTransportAllowed = (uri: TrunkUri): boolean =>
  uri.scheme === "sips" ? uri.transport === "tls" : ["udp", "tcp", "tls"].includes(uri.transport);

/** The list's URIs; undefined when one of them is no SIP URI. */
export function parseTrunkUris(value: string): TrunkUri[] | undefined {
  const uris = trunkUriTexts(value).map(parseTrunkUri);
  if (uris.length === 0 || uris.some((uri) => uri === undefined)) return undefined;
  return uris as TrunkUri[];
}

/** `host[:port]` of a URI as its Request-URI writes it (the port only when written). */
export const trunkHostPort = (uri: TrunkUri): string => sipHostPort(uri.host, uri.port);

/** `;transport=` of a URI for TCP or TLS over `sip:` (none for UDP, nor for `sips:`: TLS already). */
export const trunkTransportParam = (uri: TrunkUri): string =>
  uri.scheme === "sips" || uri.transport === "udp" ? "" : `;transport=${uri.transport}`;

/** The Request-URI (and To) of a call to `user` on the trunk `uri`. */
export const trunkRequestUri = (user: string, uri: TrunkUri): string =>
  `${uri.scheme}:${user}@${trunkHostPort(uri)}${trunkTransportParam(uri)};user=phone`;
