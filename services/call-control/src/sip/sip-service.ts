import { readFile } from "node:fs/promises";
import { internalKey, type Logger, type Pool } from "@switchboard/kit";
import { startSipEndpoint, type SipEndpoint, type SipRequestHandler } from "./stack/endpoint.js";
import { responseTo } from "./stack/message.js";
import { NonceIssuer } from "./registrar/nonce.js";
import { sweepNonceUses } from "./registrar/nonce-uses.js";
import { createRegistrar } from "./registrar/registrar.js";
import { sweepExpiredBindings } from "./registrar/registrations.js";
import { unspecified, type SipSettings } from "./sip-settings.js";
import { sipHost, sipHostPort } from "./stack/sip-host.js";
import type { SipFlow, SipTlsOptions } from "./stack/transport.js";

export interface RunningSip {
  endpoint: SipEndpoint;
  /** What Via and Contact say: `host:port`. */
  publicAddress: string;
  /**
   * Names the peers a TCP or TLS connection may be opened to (the voice carrier installs the
   * trunk's addresses as it resolves them); none until then. Phones are reached only over the
   * connection they opened.
   */
  dialTo(dialable: (flow: SipFlow) => boolean): void;
  stop(): Promise<void>;
}

/** How often expired bindings and stale nonces' uses are deleted, and (bindings) how long after their expiry. */
const sweepIntervalMs = 10 * 60_000;
const sweepGraceSeconds = 3_600;

/**
 * The SIP side of call-control, started only with SIP_LISTEN: the endpoint on UDP and TCP with
 * the registrar. Every replica derives the same nonce key from INTERNAL_SECRET and keeps
 * registrations in PostgreSQL, so a phone may REGISTER with any replica.
 */
export async function startSip(options: {
  pool: Pool;
  logger: Logger;
  settings: SipSettings;
}): Promise<RunningSip | undefined> {
  const { pool, logger, settings } = options;
  if (!settings.listen) return undefined;
  const nonces = new NonceIssuer(internalKey("sip-digest-nonce"), settings.nonceLifetimeMs);
  // As a Request-URI writes them (`./stack/sip-host.ts`): an IPv6 address as `[canonical]`.
  const hosts = [settings.domain, settings.publicAddress.host, settings.listen.host]
    .filter((host): host is string => host !== undefined && !unspecified(host))
    .map(sipHost);
  // The registrar records the public address, whose port may be the one just bound.
  const bound: {
    registrar?: SipRequestHandler;
    dialable?: (flow: SipFlow) => boolean;
  } = {};
  const endpoint = await startSipEndpoint({
    host: settings.listen.host,
    port: settings.listen.port,
    logger,
    publicAddress: settings.publicAddress,
    tls: await tlsOptions(settings.tls),
    // A phone's connection outlives its longest registration (it re-registers before then).
    streamIdleMs: (settings.maxExpires + 300) * 1000,
    // The only peers a connection is opened to (the trunk's): phones are reached over their own.
    dialable: (flow: SipFlow) => bound.dialable?.(flow) ?? false,
    handlers: {
      REGISTER: async (request, context) => {
        if (bound.registrar) return bound.registrar(request, context);
        context.respond(responseTo(request, 503));
      },
    },
  });
  const publicAddress = endpoint.publicAddress;
  bound.registrar = createRegistrar({
    pool,
    logger,
    nonces,
    settings: {
      realm: settings.domain,
      algorithms: settings.digestAlgorithms,
      hosts: [...new Set(hosts)],
      minExpires: settings.minExpires,
      maxExpires: settings.maxExpires,
      defaultExpires: settings.defaultExpires,
      receivedBy: publicAddress,
      pathAllow: settings.pathAllow,
    },
  });
  const sweep = setInterval(() => {
    sweepExpiredBindings(pool, sweepGraceSeconds).catch((error: unknown) =>
      logger.warn({ err: error }, "sip: could not sweep expired registrations"),
    );
    sweepNonceUses(pool).catch((error: unknown) =>
      logger.warn({ err: error }, "sip: could not sweep used nonces"),
    );
  }, sweepIntervalMs);
  sweep.unref();
  const tlsPort = endpoint.transport.tlsPort;
  logger.info(
    {
      listen: sipHostPort(endpoint.transport.host, endpoint.transport.port),
      ...(tlsPort !== undefined ? { tls: sipHostPort(endpoint.transport.host, tlsPort) } : {}),
      public: publicAddress,
    },
    tlsPort !== undefined ? "sip: listening (udp, tcp, tls)" : "sip: listening (udp, tcp)",
  );
  return {
    endpoint,
    publicAddress,
    dialTo: (dialable) => {
      bound.dialable = dialable;
    },
    stop: async () => {
      clearInterval(sweep);
      await endpoint.stop();
    },
  };
}

/**
 * The TLS options from SIP_TLS_*: the listener's certificate and key, the trunk's CAs, read
 * now; a file that cannot be read fails the start.
 */
async function tlsOptions(tls: SipSettings["tls"]): Promise<SipTlsOptions | undefined> {
  const read = async (name: string, path: string | undefined) => {
    if (path === undefined) return undefined;
    try {
      return await readFile(path);
    } catch (error) {
      throw new Error(`${name}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code}`);
    }
  };
  const [cert, key, ca] = await Promise.all([
    read("SIP_TLS_CERT_FILE", tls.certFile),
    read("SIP_TLS_KEY_FILE", tls.keyFile),
    read("SIP_TLS_CA_FILE", tls.caFile),
  ]);
  return {
    listen: tls.port !== undefined && cert && key ? { port: tls.port, cert, key } : undefined,
    ca,
  };
}
