import { z } from "zod";
import { digestAlgorithm, type DigestAlgorithm } from "./stack/digest.js";
import { parseHostPort, sipHost } from "./stack/sip-host.js";
import { addressBlock, parseAddressBlock, type AddressBlock } from "./trunk-allow.js";
import {
  maxTrunkUris,
  parseTrunkUris,
  trunkTransportAllowed,
  trunkUriTexts,
  type TrunkUri,
} from "./trunk-uris.js";

/**
 * `host:port` or `host[:port]` (a name, an IPv4 address, or an IPv6 address in brackets:
 * `[::]:5060`, `[2001:db8::1]`), checked with a message saying what is wrong.
 */
const hostPortSetting = (options: { port: "required" | "optional"; minPort: number }) =>
  z.string().superRefine((value, ctx) => {
    const parsed = parseHostPort(value);
    const shape = options.port === "required" ? "host:port" : "host or host:port";
    if ("error" in parsed) {
      ctx.addIssue({ code: "custom", message: `must be ${shape}: ${parsed.error}` });
    } else if (parsed.port === undefined && options.port === "required") {
      ctx.addIssue({
        code: "custom",
        message: `must be ${shape} (e.g. 0.0.0.0:5060 or [::]:5060): the port is missing`,
      });
    } else if (
      parsed.port !== undefined &&
      (parsed.port < options.minPort || parsed.port > 65535)
    ) {
      ctx.addIssue({ code: "custom", message: `the port must be ${options.minPort}–65535` });
    }
  });

/** The host (IPv6 without brackets) and port of a setting `hostPortSetting` checked. */
const hostPortOf = (value: string | undefined) => {
  const parsed = value === undefined ? undefined : parseHostPort(value);
  return parsed && !("error" in parsed) ? parsed : undefined;
};

/** A wildcard address (`0.0.0.0`, `::`): every interface, which no peer can be told to reach. */
export const unspecified = (host: string): boolean => host === "0.0.0.0" || host === "::";

/** Comma-separated IPv4/IPv6 addresses or CIDRs (SIP_TRUNK_ALLOW, SIP_PATH_ALLOW). */
const addressBlocks = () =>
  z.string().transform((value, ctx) => {
    const items = value.split(",").map((item) => item.trim());
    const blocks = items.map(parseAddressBlock);
    if (items.length === 0 || blocks.some((block) => block === undefined)) {
      ctx.addIssue({
        code: "custom",
        message: "must list IP addresses or CIDRs (a.b.c.d/n, 2001:db8::/n)",
      });
      return z.NEVER;
    }
    return blocks as AddressBlock[];
  });
const port = z.coerce.number().int().min(0).max(65_535);

const seconds = (fallback: number, max: number) =>
  z.coerce.number().int().min(1).max(max).default(fallback);

/** The SIP variables of call-control (docs/api.md "Voice over SIP", docs/configuration.md). */
export const sipSettingsFields = {
  SIP_LISTEN: hostPortSetting({ port: "required", minPort: 0 })
    .optional()
    .describe(
      "`host:port` the SIP listener binds, UDP and TCP (e.g. `0.0.0.0:5060`; an IPv6 address in brackets: `[::]:5060` takes IPv6 and IPv4 peers, `[2001:db8::5]:5060` IPv6 only; port 0 takes a free one, for tests); unset, no SIP listener starts",
    ),
  SIP_TLS_PORT: port
    .optional()
    .describe(
      "the port of the SIP-over-TLS listener (SIPS, usually 5061) on SIP_LISTEN's host, for phones; 0 takes a free one (tests); unset, no TLS listener. Needs SIP_TLS_CERT_FILE and SIP_TLS_KEY_FILE; its public port is the same",
    ),
  SIP_TLS_CERT_FILE: z
    .string()
    .min(1)
    .optional()
    .describe(
      "path of the PEM certificate chain the TLS listener presents (also the client certificate of TLS connections to the trunk); read at start",
    ),
  SIP_TLS_KEY_FILE: z
    .string()
    .min(1)
    .optional()
    .describe(
      "path of the PEM private key of SIP_TLS_CERT_FILE (mount it from a Secret); read at start",
    ),
  SIP_TLS_CA_FILE: z
    .string()
    .min(1)
    .optional()
    .describe(
      "path of PEM CA certificates a TLS trunk's certificate must chain to (default: the system's CAs); read at start",
    ),
  SIP_PUBLIC_ADDRESS: hostPortSetting({ port: "optional", minPort: 1 })
    .optional()
    .describe(
      "`host[:port]` this replica is reached at, as Via and Contact say (an IPv6 address in brackets: `[2001:db8::5]:5060`; default SIP_LISTEN; the port defaults to SIP_LISTEN's)",
    ),
  SIP_DOMAIN: z
    .string()
    .refine((v) => {
      const parsed = parseHostPort(v);
      return !("error" in parsed) && parsed.port === undefined;
    }, "must be a host name, an IPv4 address or an IPv6 address in brackets ([2001:db8::5])")
    .optional()
    .describe(
      "the seats' SIP domain and digest realm (`sip:<seat id>@<domain>`; an IPv6 address in brackets; default the host of SIP_PUBLIC_ADDRESS or SIP_LISTEN, else `localhost`); changing it invalidates every seat's credentials until rotated",
    ),
  SIP_DIGEST_ALGORITHMS: z
    .string()
    .default("SHA-256,MD5")
    .transform((value, ctx) => {
      const names = value.split(",").map((name) => name.trim());
      const algorithms = names.map(digestAlgorithm);
      if (names.length === 0 || algorithms.some((a) => a === undefined)) {
        ctx.addIssue({ code: "custom", message: "must list SHA-256 and/or MD5" });
        return z.NEVER;
      }
      return [...new Set(algorithms as DigestAlgorithm[])];
    })
    .describe(
      "the digest algorithms a REGISTER is challenged with, most preferred first (RFC 8760); a phone whose SIP stack gives up on a challenge it cannot answer (baresip 1.x) needs `MD5` alone",
    ),
  SIP_TRUNK_URI: z
    .string()
    .refine(
      (v) => parseTrunkUris(v) !== undefined,
      "must be SIP URIs: sip:host[:port][;transport=udp|tcp|tls] or sips:host[:port], comma-separated (an IPv6 host in brackets: sip:[2001:db8::1]:5060)",
    )
    .refine(
      (v) => trunkUriTexts(v).length <= maxTrunkUris,
      `must list at most ${maxTrunkUris} URIs`,
    )
    .refine(
      (v) => (parseTrunkUris(v) ?? []).every((uri) => (uri.port ?? 5060) <= 65535),
      "the port must be 1–65535",
    )
    .refine(
      (v) => (parseTrunkUris(v) ?? []).every(trunkTransportAllowed),
      "transport must be udp, tcp or tls (sips: is tls)",
    )
    .optional()
    .describe(
      'sip voice carrier: the carrier\'s SIP trunk outbound calls go to: `sip:trunk.example.net:5060;transport=udp` (the default transport; an IPv6 address in brackets, `sip:[2001:db8::1]:5060`), `;transport=tcp`, or TLS as `sips:trunk.example.net` / `;transport=tls` (port 5061 unless named; its certificate is verified, SIP_TLS_CA_FILE); required with VOICE_CARRIER=sip. Several URIs, comma-separated, are tried in that order, each name resolved per RFC 3263 (SRV when it has no port: `_sip._udp`, `_sip._tcp` or `_sips._tcp`, then A); a call fails over to the next address (docs/operations.md "SIP trunk health and failover")',
    ),
  SIP_TRUNK_FAILOVER_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(30_000)
    .default(2_000)
    .describe(
      "sip voice carrier: an INVITE to a trunk address with no response at all (not even 100 Trying) within this long goes to the next address (RFC 3263 §4.3), well before Timer B's 32 s",
    ),
  SIP_TRUNK_OPTIONS_INTERVAL_SECONDS: z.coerce
    .number()
    .min(0)
    .max(3_600)
    .refine((v) => v === 0 || v >= 0.2, "must be 0 (off) or at least 0.2")
    .default(0)
    .describe(
      "sip voice carrier: how often each trunk address is sent an OPTIONS (decimals allowed); an address that stops answering is skipped by new calls and `sip_trunk_up` says so. 0: no pings, every address counts as up",
    ),
  SIP_TRUNK_OPTIONS_DOWN_AFTER: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(3)
    .describe(
      "sip voice carrier: consecutive OPTIONS without an answer (none within the interval, at most 5 s, or a 503) that take a trunk address out",
    ),
  SIP_TRUNK_OPTIONS_UP_AFTER: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(2)
    .describe(
      "sip voice carrier: consecutive answered OPTIONS that bring a trunk address that was out back",
    ),
  SIP_TRUNK_RESOLVE_SECONDS: seconds(60, 86_400).describe(
    "sip voice carrier: the longest the trunk's DNS names (SRV, A) are kept before they are resolved again (sooner when their records' TTL is shorter)",
  ),
  SIP_TRUNK_USERNAME: z
    .string()
    .min(1)
    .max(256)
    .optional()
    .describe("sip voice carrier: the digest username answering the trunk's 401/407 challenges"),
  SIP_TRUNK_PASSWORD: z
    .string()
    .min(1)
    .max(256)
    .optional()
    .describe(
      "sip voice carrier: the digest password for the trunk (a secret: never logged); required with SIP_TRUNK_USERNAME",
    ),
  SIP_TRUNK_ALLOW: addressBlocks()
    .optional()
    .describe(
      "sip voice carrier: comma-separated IPv4 or IPv6 addresses or CIDRs (`192.0.2.0/24`, `2001:db8::/64`) whose INVITEs are inbound calls (default: the SIP_TRUNK_URI hosts that are IP addresses); an INVITE from any other source is answered 403",
    ),
  SIP_PATH_ALLOW: addressBlocks()
    .optional()
    .describe(
      "comma-separated IPv4 or IPv6 addresses or CIDRs of the SIP edges (the chart's `sipEdge`) whose REGISTERs may carry a Path (RFC 3327): the phone is then reached through the edge that added it; a REGISTER with a Path from any other source is answered 403. Unset: a Path is taken from any source (set it when phones reach SIP_LISTEN directly)",
    ),
  SIP_RTP_RELAY: hostPortSetting({ port: "required", minPort: 1 })
    .refine(
      (v) => !hostPortOf(v)?.host.includes(":"),
      "must name rtpengine by an IPv4 address or a name: its ng client speaks over IPv4 only (the media it anchors may be IPv6)",
    )
    .optional()
    .describe(
      "sip voice carrier: `host:port` of rtpengine's ng control port (UDP over IPv4: an IPv4 address or a name; the media it anchors may be IPv6); every SDP passed from one leg to the other is anchored there. Unset: signalling only, media flows between the phone and the trunk",
    ),
  SIP_REGISTER_MIN_EXPIRES: seconds(60, 86_400).describe(
    "a REGISTER asking for a shorter non-zero expiry is answered 423 with Min-Expires",
  ),
  SIP_REGISTER_MAX_EXPIRES: seconds(3_600, 86_400 * 7).describe(
    "a longer requested expiry is cut down to this",
  ),
  SIP_REGISTER_DEFAULT_EXPIRES: seconds(3_600, 86_400 * 7).describe(
    "the expiry of a contact when neither it nor the REGISTER names one (kept within the minimum and maximum)",
  ),
  SIP_NONCE_LIFETIME_SECONDS: seconds(300, 86_400).describe(
    "a digest nonce older than this is answered with a new challenge, stale=true",
  ),
};

type SipFieldValues = z.output<z.ZodObject<typeof sipSettingsFields>>;

/** The listen address, public address, domain and registrar limits. */
export function sipSettings(value: SipFieldValues) {
  const listen = hostPortOf(value.SIP_LISTEN);
  const published = hostPortOf(value.SIP_PUBLIC_ADDRESS);
  const publicHost = published?.host ?? listen?.host;
  const publicPort = published?.port ?? listen?.port;
  return {
    /** The address bound (an IPv6 one without brackets). */
    listen: listen ? { host: listen.host, port: listen.port ?? 5060 } : undefined,
    /** What Via and Contact say (the host bare: `sipHost` brackets IPv6); undefined port: the bound one. */
    publicAddress: { host: publicHost, port: publicPort },
    /** As a URI writes it: an IPv6 address in brackets. */
    domain: sipHost(value.SIP_DOMAIN ?? publicHost ?? "localhost"),
    minExpires: value.SIP_REGISTER_MIN_EXPIRES,
    maxExpires: value.SIP_REGISTER_MAX_EXPIRES,
    defaultExpires: Math.min(
      Math.max(value.SIP_REGISTER_DEFAULT_EXPIRES, value.SIP_REGISTER_MIN_EXPIRES),
      value.SIP_REGISTER_MAX_EXPIRES,
    ),
    nonceLifetimeMs: value.SIP_NONCE_LIFETIME_SECONDS * 1000,
    digestAlgorithms: value.SIP_DIGEST_ALGORITHMS,
    tls: tlsOf(value),
    trunk: trunkOf(value),
    trunkAllow: trunkAllowOf(value),
    pathAllow: value.SIP_PATH_ALLOW,
    rtpRelay: rtpRelayOf(value),
  };
}

/**
 * Where outbound calls go: the trunk's URIs in order, its digest credentials if any, and how its
 * addresses are resolved, watched and failed over (`../carrier/sip/trunk-*.ts`).
 */
export interface SipTrunk {
  uris: TrunkUri[];
  username: string | undefined;
  password: string | undefined;
  failoverTimeoutMs: number;
  /** 0: no OPTIONS pings. */
  optionsIntervalMs: number;
  downAfter: number;
  upAfter: number;
  resolveIntervalMs: number;
}

function trunkOf(value: SipFieldValues): SipTrunk | undefined {
  const uris = value.SIP_TRUNK_URI ? parseTrunkUris(value.SIP_TRUNK_URI) : undefined;
  if (!uris) return undefined;
  return {
    uris,
    username: value.SIP_TRUNK_USERNAME,
    password: value.SIP_TRUNK_PASSWORD,
    failoverTimeoutMs: value.SIP_TRUNK_FAILOVER_TIMEOUT_MS,
    optionsIntervalMs: Math.round(value.SIP_TRUNK_OPTIONS_INTERVAL_SECONDS * 1000),
    downAfter: value.SIP_TRUNK_OPTIONS_DOWN_AFTER,
    upAfter: value.SIP_TRUNK_OPTIONS_UP_AFTER,
    resolveIntervalMs: value.SIP_TRUNK_RESOLVE_SECONDS * 1000,
  };
}

/** The TLS listener's port and the files of its certificate, key and the trunk's CAs. */
function tlsOf(value: SipFieldValues) {
  return {
    port: value.SIP_TLS_PORT,
    certFile: value.SIP_TLS_CERT_FILE,
    keyFile: value.SIP_TLS_KEY_FILE,
    caFile: value.SIP_TLS_CA_FILE,
  };
}

/** The sources whose INVITEs are inbound calls: SIP_TRUNK_ALLOW, else the trunk's IP addresses. */
function trunkAllowOf(value: SipFieldValues): AddressBlock[] {
  if (value.SIP_TRUNK_ALLOW) return value.SIP_TRUNK_ALLOW;
  const uris = value.SIP_TRUNK_URI ? (parseTrunkUris(value.SIP_TRUNK_URI) ?? []) : [];
  return uris.flatMap((uri) => addressBlock(uri.host) ?? []);
}

/** rtpengine's ng control address (an IPv6 one without brackets), if media is relayed. */
function rtpRelayOf(value: SipFieldValues): { host: string; port: number } | undefined {
  const relay = hostPortOf(value.SIP_RTP_RELAY);
  return relay?.port !== undefined ? { host: relay.host, port: relay.port } : undefined;
}

/** What the `sip` voice carrier cannot do without: a listener and a trunk. */
export function checkSipCarrierSettings(value: SipFieldValues, ctx: z.RefinementCtx): void {
  for (const name of ["SIP_LISTEN", "SIP_TRUNK_URI"] as const) {
    if (value[name] === undefined) {
      ctx.addIssue({ code: "custom", path: [name], message: "is required with the sip carrier" });
    }
  }
}

export type SipSettings = ReturnType<typeof sipSettings>;

/** Reports expiry limits that contradict each other, and a wildcard listener nobody could name. */
export function checkSipSettings(value: SipFieldValues, ctx: z.RefinementCtx): void {
  const listenHost = hostPortOf(value.SIP_LISTEN)?.host;
  if (listenHost !== undefined && unspecified(listenHost) && !value.SIP_PUBLIC_ADDRESS) {
    ctx.addIssue({
      code: "custom",
      path: ["SIP_PUBLIC_ADDRESS"],
      message: "is required when SIP_LISTEN binds every interface (0.0.0.0 or [::])",
    });
  }
  const publicHost = hostPortOf(value.SIP_PUBLIC_ADDRESS)?.host;
  if (publicHost !== undefined && unspecified(publicHost)) {
    ctx.addIssue({
      code: "custom",
      path: ["SIP_PUBLIC_ADDRESS"],
      message: "must be an address peers can reach, not 0.0.0.0 or [::]",
    });
  }
  if (value.SIP_TLS_PORT !== undefined) {
    for (const name of ["SIP_TLS_CERT_FILE", "SIP_TLS_KEY_FILE"] as const) {
      if (value[name] === undefined) {
        ctx.addIssue({ code: "custom", path: [name], message: "is required with SIP_TLS_PORT" });
      }
    }
  }
  if ((value.SIP_TLS_CERT_FILE === undefined) !== (value.SIP_TLS_KEY_FILE === undefined)) {
    ctx.addIssue({
      code: "custom",
      path: [value.SIP_TLS_CERT_FILE === undefined ? "SIP_TLS_CERT_FILE" : "SIP_TLS_KEY_FILE"],
      message: "SIP_TLS_CERT_FILE and SIP_TLS_KEY_FILE go together",
    });
  }
  if ((value.SIP_TRUNK_USERNAME === undefined) !== (value.SIP_TRUNK_PASSWORD === undefined)) {
    ctx.addIssue({
      code: "custom",
      path: [value.SIP_TRUNK_USERNAME === undefined ? "SIP_TRUNK_USERNAME" : "SIP_TRUNK_PASSWORD"],
      message: "SIP_TRUNK_USERNAME and SIP_TRUNK_PASSWORD go together",
    });
  }
  if (value.SIP_REGISTER_MIN_EXPIRES > value.SIP_REGISTER_MAX_EXPIRES) {
    ctx.addIssue({
      code: "custom",
      path: ["SIP_REGISTER_MIN_EXPIRES"],
      message: "must not exceed SIP_REGISTER_MAX_EXPIRES",
    });
  }
}
