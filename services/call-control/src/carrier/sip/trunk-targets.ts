import type { Logger } from "@switchboard/kit";
import type { SipEndpoint } from "../../sip/stack/endpoint.js";
import type { SipFlow } from "../../sip/stack/transport.js";
import type { SipTrunk } from "../../sip/sip-settings.js";
import type { TrunkUri } from "../../sip/trunk-uris.js";
import { createTrunkHealth, type TrunkHealth } from "./trunk-health.js";
import {
  addressKey,
  orderTargets,
  resolveTrunkUri,
  systemDns,
  type ResolvedTrunkUri,
  type TrunkAddress,
  type TrunkDns,
} from "./trunk-resolver.js";

/** A DNS answer is kept at least this long (a TTL of 0 would resolve on every tick). */
const minResolveMs = 5_000;
/** After a failed resolution, the next try comes this soon (the last answer is kept meanwhile). */
const retryResolveMs = 10_000;

export interface TrunkTargets {
  /**
   * The addresses a new call's INVITE tries, in order: the URIs as listed, each by SRV
   * priority and weight (drawn per call); addresses the OPTIONS pings took out go last, so a
   * call still tries them when nothing else is left.
   */
  forCall(): TrunkAddress[];
  /** Every address known now (what the OPTIONS pings go to). */
  all(): TrunkAddress[];
  /**
   * Whether `flow` is one of the trunk's addresses, now or in an earlier answer (a call's
   * dialog keeps the address it was sent to): the only peers a TCP or TLS connection is opened to.
   */
  reaches(flow: SipFlow): boolean;
  /** The first resolution of every name is done (or failed). */
  readonly ready: Promise<void>;
  stop(): void;
}

/** Before its first answer, a name is its own target: the transport's send resolves it. */
function unresolved(uri: TrunkUri): ResolvedTrunkUri {
  const port = uri.port ?? (uri.transport === "tls" ? 5061 : 5060);
  const address: TrunkAddress = {
    key: addressKey(uri.host, port),
    transport: uri.transport,
    address: uri.host,
    port,
    uri,
  };
  return {
    uri,
    tiers: [{ priority: 0, entries: [{ weight: 0, addresses: [address] }] }],
    ttlSeconds: 0,
  };
}

/**
 * The trunk's addresses, kept fresh: each URI resolved (RFC 3263) at start and again when its
 * answer's TTL runs out (at most `resolveIntervalMs` later), with the OPTIONS pings'
 * verdicts (when SIP_TRUNK_OPTIONS_INTERVAL_SECONDS is set).
 */
export function createTrunkTargets(options: {
  trunk: SipTrunk;
  endpoint: SipEndpoint;
  logger: Logger;
  /** Whether the SIP socket sends to IPv6 (AAAA answers are kept only then). */
  ipv6: boolean;
  dns?: TrunkDns;
  random?: () => number;
}): TrunkTargets {
  const { trunk, logger } = options;
  const dns = options.dns ?? systemDns;
  const resolved: ResolvedTrunkUri[] = trunk.uris.map(unresolved);
  /** `transport key` of every address any answer named (a handful: the URIs' SRV and A records). */
  const known = new Set<string>();
  const flowKey = (transport: string, address: string, port: number) =>
    `${transport} ${addressKey(address.toLowerCase(), port)}`;
  const remember = (answer: ResolvedTrunkUri) => {
    for (const tier of answer.tiers) {
      for (const entry of tier.entries) {
        for (const a of entry.addresses) known.add(flowKey(a.transport, a.address, a.port));
      }
    }
  };
  resolved.forEach(remember);
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;

  const resolve = async (index: number): Promise<void> => {
    const uri = trunk.uris[index]!;
    let nextMs: number;
    try {
      const answer = await resolveTrunkUri(uri, dns, { ipv6: options.ipv6 });
      if (stopped) return;
      if (answer.tiers.every((tier) => tier.entries.every((e) => e.addresses.length === 0))) {
        // The last answer (or the name itself) is kept: better a stale address than none.
        logger.warn({ host: uri.host }, "sip: the trunk's name resolves to no address");
        nextMs = Math.min(retryResolveMs, trunk.resolveIntervalMs);
      } else {
        resolved[index] = answer;
        remember(answer);
        if (answer.ttlSeconds === Number.POSITIVE_INFINITY) return;
        nextMs = Math.min(
          Math.max(answer.ttlSeconds * 1000, minResolveMs),
          trunk.resolveIntervalMs,
        );
      }
    } catch (error) {
      if (stopped) return;
      logger.warn({ err: error, host: uri.host }, "sip: could not resolve the trunk's name");
      nextMs = Math.min(retryResolveMs, trunk.resolveIntervalMs);
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      void resolve(index);
    }, nextMs);
    timer.unref();
    timers.add(timer);
  };
  const ready = Promise.all(trunk.uris.map((_, index) => resolve(index))).then(() => undefined);

  const all = () => orderTargets(resolved, () => 0);
  const health: TrunkHealth | undefined =
    trunk.optionsIntervalMs > 0
      ? createTrunkHealth({
          endpoint: options.endpoint,
          addresses: all,
          intervalMs: trunk.optionsIntervalMs,
          downAfter: trunk.downAfter,
          upAfter: trunk.upAfter,
          logger,
        })
      : undefined;

  return {
    forCall() {
      const ordered = orderTargets(resolved, options.random);
      if (!health) return ordered;
      const up = ordered.filter((target) => health.isUp(target.key));
      return [...up, ...ordered.filter((target) => !health.isUp(target.key))];
    },
    all,
    reaches: (flow) => known.has(flowKey(flow.transport, flow.address, flow.port)),
    ready,
    stop() {
      stopped = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      health?.stop();
    },
  };
}
