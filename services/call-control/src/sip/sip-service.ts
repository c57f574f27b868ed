import { internalKey, type Logger, type Pool } from "@switchboard/kit";
import { startSipEndpoint, type SipEndpoint, type SipRequestHandler } from "./stack/endpoint.js";
import { responseTo } from "./stack/message.js";
import { NonceIssuer } from "./registrar/nonce.js";
import { sweepNonceUses } from "./registrar/nonce-uses.js";
import { createRegistrar } from "./registrar/registrar.js";
import { sweepExpiredBindings } from "./registrar/registrations.js";
import type { SipSettings } from "./sip-settings.js";

export interface RunningSip {
  endpoint: SipEndpoint;
  /** What Via and Contact say: `host:port`. */
  publicAddress: string;
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
  const hosts = [settings.domain, settings.publicAddress.host, settings.listen.host]
    .filter((host): host is string => host !== undefined && host !== "0.0.0.0")
    .map((host) => host.toLowerCase());
  // The registrar records the public address, whose port may be the one just bound.
  const bound: { registrar?: SipRequestHandler } = {};
  const endpoint = await startSipEndpoint({
    host: settings.listen.host,
    port: settings.listen.port,
    logger,
    publicAddress: settings.publicAddress,
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
  logger.info(
    { listen: `${endpoint.transport.host}:${endpoint.transport.port}`, public: publicAddress },
    "sip: listening (udp, tcp)",
  );
  return {
    endpoint,
    publicAddress,
    stop: async () => {
      clearInterval(sweep);
      await endpoint.stop();
    },
  };
}
