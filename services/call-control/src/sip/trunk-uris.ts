/**
 * SIP_TRUNK_URI: one SIP URI of the carrier's trunk or several, comma-separated, tried in the
 * order written. Each names a host (an IPv4 address or a DNS name, resolved per RFC 3263 by
 * `../carrier/sip/trunk-resolver.ts`), an optional port (without one a DNS name is looked up by
 * SRV) and optional parameters (`transport`).
 */
export interface TrunkUri {
  /** The host as written, lower-cased: the Request-URI's host. */
  host: string;
  /** The port written in the URI; undefined: SRV (a name) or 5060. */
  port: number | undefined;
  /** The `transport` parameter, lower-cased (`udp` unless written). */
  transport: string;
}

/** `sip:host[:port]` with optional parameters. */
const trunkUri =
  /^sip:([A-Za-z0-9.-]+)(?::(\d{1,5}))?((?:;[A-Za-z0-9_.!~*'()%+-]+(?:=[A-Za-z0-9_.!~*'()%+-]+)?)*)$/i;

/** At most this many URIs: a list is a handful of addresses, not a directory. */
export const maxTrunkUris = 16;

/** The URIs of the list, trimmed (empty items dropped). */
export const trunkUriTexts = (value: string): string[] =>
  value
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);

/** One URI of the list, or undefined when it is no `sip:host[:port][;params]`. */
export function parseTrunkUri(text: string): TrunkUri | undefined {
  const match = trunkUri.exec(text);
  if (!match) return undefined;
  const transport = /;transport=([^;]*)/i.exec(match[3] ?? "")?.[1];
  return {
    host: match[1]!.toLowerCase(),
    port: match[2] ? Number(match[2]) : undefined,
    transport: (transport || "udp").toLowerCase(),
  };
}

/** The list's URIs; undefined when one of them is no SIP URI. */
export function parseTrunkUris(value: string): TrunkUri[] | undefined {
  const uris = trunkUriTexts(value).map(parseTrunkUri);
  if (uris.length === 0 || uris.some((uri) => uri === undefined)) return undefined;
  return uris as TrunkUri[];
}

/** `host[:port]` of a URI as its Request-URI writes it (the port only when written). */
export const trunkHostPort = (uri: TrunkUri): string =>
  uri.port === undefined ? uri.host : `${uri.host}:${uri.port}`;
