import { lookup as dnsLookup } from "node:dns";
import { isIP } from "node:net";
import { blockedReason } from "./ip-ranges.js";

/**
 * The SSRF guard, run when a subscription is created or changed and again before every
 * delivery: only http(s); https unless the host is exempt; no credentials in the URL; the host
 * is resolved and EVERY address must be public. The addresses checked are returned so the
 * sender connects to exactly those (no second resolution between check and connect).
 */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface GuardOptions {
  /**
   * Hosts exempt from the address checks (plain http allowed for them), each matched with its
   * port: `host` (the scheme's default port only), `host:port`, or `host:*` (any port).
   */
  allowPrivateHosts: readonly string[];
  /**
   * Origins exempt for themselves only (the internal sink, e.g. http://127.0.0.1:4100). The
   * platform passes them at delivery and for its own smoke subscription, never for the API.
   */
  internalOrigins?: readonly string[];
  /**
   * Origins refused whatever the allow-list says, as unlisted ones are: any URL whose resolved
   * address and port reach them (not merely one spelling their host alike).
   */
  forbiddenOrigins?: readonly string[];
  resolve?: Resolver;
  /** Resolution budget (default 5 s). */
  timeoutMs?: number;
}

export interface CheckedTarget {
  url: URL;
  /** The host without IPv6 brackets. */
  hostname: string;
  /** Every address the host resolved to, all checked; connect only to these. */
  addresses: ResolvedAddress[];
  exempt: boolean;
}

/** The URL is not acceptable as a webhook target; `reason` is safe to show. */
export class UnsafeUrlError extends Error {
  override readonly name = "UnsafeUrlError";
  constructor(
    readonly reason: string,
    /** `dns` when the host did not resolve (at delivery a retryable condition). */
    readonly kind: "policy" | "dns" = "policy",
  ) {
    super(reason);
  }
}

/** Names that only ever mean a cloud metadata service. */
const metadataHosts = new Set([
  "metadata",
  "metadata.google.internal",
  "metadata.goog",
  "instance-data",
]);

export const maxUrlLength = 2048;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) =>
      error
        ? reject(error)
        : resolve(addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }))),
    ),
  );

/** Parses `raw` as a URL; undefined when it is not an absolute URL. */
export function parseUrl(raw: string): URL | undefined {
  if (raw.length > maxUrlLength) return undefined;
  try {
    return new URL(raw);
  } catch {
    return undefined;
  }
}

const bare = (hostname: string) =>
  (hostname.startsWith("[") ? hostname.slice(1, -1) : hostname).toLowerCase().replace(/\.$/, "");

const defaultPort = (url: URL) => (url.protocol === "https:" ? "443" : "80");

const portOf = (url: URL) => url.port || defaultPort(url);

/** An address as one spelling: lower case, an IPv4-mapped IPv6 address as its IPv4. */
const canonicalAddress = (address: string) =>
  address.toLowerCase().replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, "$1");

/** A loopback or unspecified address: a connection to it stays on this host. */
const thisHost = (address: string) =>
  /^(loopback|unspecified)\b/.test(blockedReason(canonicalAddress(address)) ?? "");

/**
 * Whether connecting to `addresses` at the URL's port could reach one of the forbidden origins
 * (the internal sink): the same port, and an address the origin's host resolves to, or (for
 * an origin on this host) any loopback or unspecified address. Compared by address, so `localhost`, `LOCALHOST`,
 * `localhost.` or `127.1` reach the sink's `127.0.0.1` as much as `127.0.0.1` does.
 */
async function reachesForbidden(
  url: URL,
  addresses: readonly ResolvedAddress[],
  options: GuardOptions,
): Promise<boolean> {
  for (const origin of options.forbiddenOrigins ?? []) {
    const forbidden = new URL(origin);
    if (portOf(forbidden) !== portOf(url)) continue;
    const theirs = await resolveHost(bare(forbidden.hostname), options).catch(() => []);
    const near = (a: string, b: string) =>
      canonicalAddress(a) === canonicalAddress(b) || (thisHost(a) && thisHost(b));
    if (addresses.some((mine) => theirs.some((their) => near(mine.address, their.address)))) {
      return true;
    }
  }
  return false;
}

/** Whether an allow-list entry (`host`, `host:port`, `host:*`, `[v6]:port`) names the URL. */
export function allowListMatches(entry: string, url: URL): boolean {
  const spelled = entry.trim().toLowerCase();
  const split = /^(\[[^\]]+\]|[^:]+):(\d{1,5}|\*)$/.exec(spelled);
  const host = bare(split ? split[1]! : spelled);
  const port = split ? split[2]! : defaultPort(url);
  if (host !== bare(url.hostname)) return false;
  return port === "*" || port === portOf(url);
}

export async function checkWebhookUrl(url: URL, options: GuardOptions): Promise<CheckedTarget> {
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new UnsafeUrlError(`the scheme ${url.protocol.slice(0, -1)} is not allowed; use https`);
  }
  if (url.username !== "" || url.password !== "") {
    throw new UnsafeUrlError("the URL must not carry credentials");
  }
  const hostname = bare(url.hostname);
  const listed =
    (options.internalOrigins?.includes(url.origin) ?? false) ||
    options.allowPrivateHosts.some((entry) => allowListMatches(entry, url));
  // Resolved once: the addresses judged are the addresses connected to.
  const listedAddresses = listed ? await resolveHost(hostname, options) : undefined;
  // An exemption never opens a forbidden origin, whatever the host's spelling.
  const exempt =
    listedAddresses !== undefined && !(await reachesForbidden(url, listedAddresses, options));
  if (!exempt && url.protocol !== "https:") {
    throw new UnsafeUrlError("the URL must use https");
  }
  if (!exempt && metadataHosts.has(hostname)) {
    throw new UnsafeUrlError(`${hostname} is a cloud metadata host`);
  }
  const addresses = listedAddresses ?? (await resolveHost(hostname, options));
  if (!exempt) {
    for (const { address } of addresses) {
      const reason = blockedReason(address);
      if (reason) {
        throw new UnsafeUrlError(
          isIP(hostname)
            ? `${hostname} is a ${reason} address`
            : `${hostname} resolves to a ${reason} address (${address})`,
        );
      }
    }
  }
  return { url, hostname, addresses, exempt };
}

async function resolveHost(hostname: string, options: GuardOptions): Promise<ResolvedAddress[]> {
  const family = isIP(hostname);
  if (family !== 0) return [{ address: hostname, family: family === 6 ? 6 : 4 }];
  const resolve = options.resolve ?? systemResolver;
  const timeoutMs = options.timeoutMs ?? 5_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    const addresses = await Promise.race([
      resolve(hostname),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("timeout")), timeoutMs);
      }),
    ]);
    if (addresses.length === 0) throw new Error("no addresses");
    return addresses;
  } catch {
    throw new UnsafeUrlError(`the host ${hostname} does not resolve`, "dns");
  } finally {
    clearTimeout(timer);
  }
}
