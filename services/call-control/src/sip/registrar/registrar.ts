import { isId, withTransaction, type Logger, type Pool } from "@switchboard/kit";
import { ha1Of, lockSipCredentials } from "./credentials.js";
import {
  digestAlgorithm,
  digestChallenge,
  digestResponse,
  parseCredentials,
  sameDigest,
  type DigestAlgorithm,
  type DigestCredentials,
} from "../stack/digest.js";
import type { SipRequestHandler } from "../stack/endpoint.js";
import {
  addressUri,
  responseTo,
  sipUriParts,
  textHeader,
  type SipHeaders,
  type SipRequest,
  type SipResponse,
} from "../stack/message.js";
import type { NonceIssuer } from "./nonce.js";
import { claimNonceUse, parseNonceCount } from "./nonce-uses.js";
import { liveBindings, removeBindings, saveBinding, type Binding } from "./registrations.js";
import type { SipFlow } from "../stack/transport.js";
import { allowedSource, type AddressBlock } from "../trunk-allow.js";
import { pathOf, supportsPath } from "./path.js";

export interface RegistrarSettings {
  /** The seats' SIP domain and digest realm (SIP_DOMAIN). */
  realm: string;
  /** Offered in this order, one challenge each; credentials of another algorithm are refused. */
  algorithms: readonly DigestAlgorithm[];
  /** Hosts (lower case) a Request-URI or To may name: the domain and the platform's own addresses. */
  hosts: readonly string[];
  /** A shorter non-zero expiry is refused 423 with Min-Expires. */
  minExpires: number;
  /** A longer one is cut down to this. */
  maxExpires: number;
  /** When neither the contact nor the request says. */
  defaultExpires: number;
  /** This replica's SIP address (host:port), recorded with each binding. */
  receivedBy: string;
  /**
   * The sources whose REGISTER may carry a Path (SIP_PATH_ALLOW: the SIP edges); a Path from
   * elsewhere is refused 403. Undefined: any source (only edges reach the SIP port).
   */
  pathAllow?: readonly AddressBlock[] | undefined;
}

export interface RegistrarOptions {
  pool: Pool;
  logger: Logger;
  nonces: NonceIssuer;
  settings: RegistrarSettings;
}

/** A seat keeps at most this many contacts (phones) registered at once. */
export const maxBindingsPerSeat = 10;
const maxContactUriLength = 1024;
const maxCallIdLength = 1024;

/** A refusal decided inside the registrar's transaction (rolled back, then answered). */
export class SipRefusal extends Error {
  constructor(
    readonly status: number,
    readonly headers: SipHeaders = {},
    readonly reason?: string,
  ) {
    super(`refused ${status}`);
  }
}

interface ContactChange {
  uri: string;
  /** 0 removes the binding. */
  expires: number;
}

/**
 * The registrar (RFC 3261 §10.3) of the seats' addresses-of-record `sip:<seat id>@<domain>`.
 * A REGISTER without valid credentials is challenged (401, one WWW-Authenticate per algorithm
 * in the order of preference, RFC 8760 §2.4); a stale nonce with a right digest is challenged again with
 * stale=true, and so is a replay: a (nonce, nc) pair authenticates one REGISTER, on any replica
 * (`nonce-uses.ts`); a wrong digest, an unknown user or a user registering another seat's address is
 * 403. Each seat's REGISTERs are applied one at a time (its credentials row is locked), and a
 * REGISTER of the same Call-ID with a CSeq not above the binding's is refused 500 (§10.3 step 7).
 * A Path (RFC 3327, from a SIP edge) is stored with the bindings it registers (`path.ts`).
 */
export function createRegistrar(options: RegistrarOptions): SipRequestHandler {
  const { pool, logger, nonces, settings } = options;
  const nonceUseSeconds = Math.ceil(nonces.longestLifeMs / 1000);

  const challenge = (request: SipRequest, stale = false): SipResponse => {
    const nonce = nonces.issue();
    return responseTo(request, 401, {
      "www-authenticate": settings.algorithms.map((algorithm) =>
        digestChallenge({ realm: settings.realm, nonce, algorithm, stale }),
      ),
    });
  };

  return async (request, { flow, respond }) => {
    const target = sipUriParts(request.uri);
    const aor = sipUriParts(addressUri(request.headers.to));
    if (!target || !aor?.user || !settings.hosts.includes(target.host)) {
      return respond(responseTo(request, 404));
    }
    if (!settings.hosts.includes(aor.host)) return respond(responseTo(request, 404));
    if (request.headers["call-id"].length > maxCallIdLength) {
      return respond(responseTo(request, 400));
    }

    const credentials = (request.headers.authorization ?? [])
      .map(parseCredentials)
      .find((c): c is DigestCredentials => c?.realm === settings.realm);
    const algorithm = credentials && digestAlgorithm(credentials.algorithm);
    if (!credentials || !algorithm || !settings.algorithms.includes(algorithm)) {
      return respond(challenge(request));
    }
    const nonce = nonces.check(credentials.nonce);
    if (nonce === "invalid") return respond(challenge(request));
    const nc = credentials.nc === undefined ? undefined : parseNonceCount(credentials.nc);
    if (credentials.qop !== "auth" || nc === undefined || !credentials.cnonce) {
      return respond(responseTo(request, 403));
    }

    // Read now, refused only once the user is known (§10.3: authentication comes first).
    const changes = contactChanges(request, settings);
    const path = pathFrom(request, flow, settings);

    try {
      const outcome = await withTransaction(pool, async (client) => {
        const stored = isId(credentials.username, "seat")
          ? await lockSipCredentials(client, credentials.username)
          : undefined;
        if (!stored) throw new SipRefusal(403);
        if (stored.realm !== settings.realm) {
          logger.warn(
            { seat_id: stored.seat_id },
            "sip: the seat's credentials were issued for another realm; rotate them",
          );
          throw new SipRefusal(403);
        }
        const expected = digestResponse({
          algorithm,
          ha1: ha1Of(stored, algorithm),
          nonce: credentials.nonce,
          method: request.method,
          uri: credentials.uri,
          qop: credentials.qop,
          nc: credentials.nc,
          cnonce: credentials.cnonce,
        });
        if (!sameDigest(expected, credentials.response)) throw new SipRefusal(403);
        if (nonce === "stale") throw new SipRefusal(0);
        // The digest covers neither Contact nor Call-ID: a (nonce, nc) authenticates one
        // request only. A replay is challenged afresh (stale: the password was right).
        if (!(await claimNonceUse(client, credentials.nonce, nc, nonceUseSeconds))) {
          logger.warn(
            { seat_id: stored.seat_id, source: `${flow.address}:${flow.port}` },
            "sip: a REGISTER reused a nonce-count (a replay, or a client's bug); challenged again",
          );
          throw new SipRefusal(0);
        }
        // From here the use stays recorded whatever the answer: a refused request is no
        // more replayable than an accepted one.
        // The authenticated user may change only its own address-of-record (§10.3 step 5).
        if (aor.user !== stored.seat_id) return new SipRefusal(403);
        if (changes instanceof SipRefusal) return changes;
        if (path instanceof SipRefusal) return path;
        await client.query("SAVEPOINT register_changes");
        try {
          return await applyChanges(client, request, flow, stored.seat_id, changes, path);
        } catch (error) {
          if (!(error instanceof SipRefusal)) throw error;
          await client.query("ROLLBACK TO SAVEPOINT register_changes");
          return error;
        }
      });
      if (outcome instanceof SipRefusal) throw outcome;
      const bindings = outcome;
      respond(
        responseTo(request, 200, {
          // (The library writes an empty list as `Contact: *`: no bindings, no header.)
          ...(bindings.length > 0
            ? {
                contact: bindings.map((b) => ({
                  uri: b.contact_uri,
                  params: { expires: String(b.expires_in) },
                })),
              }
            : {}),
          // RFC 3327 §5.3: the Path stored, to a UA that said it supports Path.
          ...(Array.isArray(path) && path.length > 0 && supportsPath(request)
            ? { path: request.headers.path }
            : {}),
          date: new Date().toUTCString(),
        }),
      );
    } catch (error) {
      if (!(error instanceof SipRefusal)) throw error;
      if (error.status === 0) return respond(challenge(request, true));
      respond(responseTo(request, error.status, error.headers, error.reason));
    }
  };

  async function applyChanges(
    client: Pick<Pool, "query">,
    request: SipRequest,
    flow: SipFlow,
    seatId: string,
    changes: ContactChange[] | "all",
    path: string[],
  ): Promise<Binding[]> {
    const callId = request.headers["call-id"];
    const cseq = request.headers.cseq.seq;
    const current = await liveBindings(client, seatId);
    if (changes !== "all" && changes.length === 0) return current;
    const touched =
      changes === "all"
        ? current
        : current.filter((b) => changes.some((c) => c.uri === b.contact_uri));
    // §10.3 step 7: a REGISTER older than the one that made a binding changes nothing.
    if (touched.some((b) => b.call_id === callId && BigInt(b.cseq) >= BigInt(cseq))) {
      throw new SipRefusal(500, {}, "Out Of Order");
    }
    if (changes === "all") {
      await removeBindings(client, seatId);
    } else {
      const removed = changes.filter((c) => c.expires === 0).map((c) => c.uri);
      if (removed.length > 0) await removeBindings(client, seatId, removed);
      for (const change of changes.filter((c) => c.expires > 0)) {
        await saveBinding(client, {
          seatId,
          contactUri: change.uri,
          callId,
          cseq,
          expiresSeconds: change.expires,
          flow,
          receivedBy: settings.receivedBy,
          path,
        });
      }
    }
    const after = await liveBindings(client, seatId);
    if (after.length > maxBindingsPerSeat) {
      throw new SipRefusal(403, {}, "Too Many Registrations");
    }
    logger.info(
      {
        seat_id: seatId,
        transport: flow.transport,
        source: `${flow.address}:${flow.port}`,
        path: path.length,
        bindings: after.length,
      },
      "sip: registration updated",
    );
    return after;
  }
}

/**
 * What the REGISTER asks (§10.3 steps 6–7): "all" (`Contact: *` with `Expires: 0`), or each
 * contact with its expiry (the contact's `expires` parameter, else the Expires header, else the
 * default; a non-zero expiry below the minimum is refused 423, above the maximum cut down). A
 * request with no Contact only asks for the current bindings.
 */
export function contactChanges(
  request: SipRequest,
  settings: Pick<RegistrarSettings, "minExpires" | "maxExpires" | "defaultExpires">,
): ContactChange[] | "all" | SipRefusal {
  const headerExpires = parseExpires(textHeader(request, "expires"));
  const contact = request.headers.contact;
  const contacts =
    contact === undefined ? [] : contact === "*" ? [{ uri: "*", params: {} }] : contact;
  if (contacts.some((c) => addressUri(c) === "*")) {
    return contacts.length === 1 && headerExpires === 0 ? "all" : new SipRefusal(400);
  }
  const changes: ContactChange[] = [];
  for (const address of contacts) {
    const uri = addressUri(address);
    if (uri.length > maxContactUriLength || !sipUriParts(uri)) return new SipRefusal(400);
    const asked =
      parseExpires(address.params.expires ?? undefined) ?? headerExpires ?? settings.defaultExpires;
    if (asked !== 0 && asked < settings.minExpires) {
      return new SipRefusal(423, { "min-expires": String(settings.minExpires) });
    }
    changes.push({ uri, expires: Math.min(asked, settings.maxExpires) });
  }
  if (changes.length > maxBindingsPerSeat) return new SipRefusal(403, {}, "Too Many Registrations");
  return changes;
}

/**
 * The REGISTER's Path (RFC 3327), to be stored with its bindings: refused 400 when longer than
 * a registration keeps, 403 from a source outside `pathAllow` (a phone cannot route its own
 * calls elsewhere by writing a Path).
 */
function pathFrom(
  request: SipRequest,
  flow: SipFlow,
  settings: Pick<RegistrarSettings, "pathAllow">,
): string[] | SipRefusal {
  const path = pathOf(request);
  if (path === "too long") return new SipRefusal(400, {}, "Path Too Long");
  if (path.length > 0 && settings.pathAllow && !allowedSource(settings.pathAllow, flow.address)) {
    return new SipRefusal(403, {}, "Path Not Allowed");
  }
  return path;
}

/** delta-seconds (RFC 3261 §25.1); a value beyond 2^32-1 counts as that (§20.19), junk as absent. */
function parseExpires(value: string | undefined | null): number | undefined {
  if (value === undefined || value === null || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Math.min(Number(value), 4_294_967_295);
}
