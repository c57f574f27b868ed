import { randomBytes } from "node:crypto";
import { trackSipTrunkHealth, type Logger } from "@switchboard/kit";
import { newTag, type SipRequest } from "../../sip/stack/message.js";
import type { SipEndpoint } from "../../sip/stack/endpoint.js";
import type { SipFlow } from "../../sip/stack/transport.js";
import { trunkHostPort, trunkTransportParam } from "../../sip/trunk-uris.js";
import { contactUri } from "./sip-contact.js";
import type { TrunkAddress } from "./trunk-resolver.js";

/** An OPTIONS not answered within this long (or the interval, when shorter) is a failure. */
const maxPingWaitMs = 5_000;

export interface TrunkHealth {
  /** False once the address stopped answering (until it answers again); true when not pinged. */
  isUp(key: string): boolean;
  stop(): void;
}

interface AddressHealth {
  up: boolean;
  /** Consecutive pings against the current state (failures while up, answers while down). */
  streak: number;
  pending: boolean;
}

/**
 * OPTIONS pings (RFC 3261 §11) to each trunk address every `intervalMs`: `downAfter`
 * consecutive ones without an answer (none in time, or 503) take the address out, `upAfter`
 * answered ones bring it back. Any other final response means a server is there (a trunk may
 * answer an OPTIONS of an unknown party 403 or 404). A new address starts up. `sip_trunk_up`
 * reports the table.
 */
export function createTrunkHealth(options: {
  endpoint: SipEndpoint;
  /** The addresses to ping now (they change as DNS answers do). */
  addresses: () => readonly TrunkAddress[];
  intervalMs: number;
  downAfter: number;
  upAfter: number;
  logger: Logger;
}): TrunkHealth {
  const { endpoint, logger, intervalMs, downAfter, upAfter } = options;
  const table = new Map<string, AddressHealth>();
  const waitMs = Math.min(intervalMs, maxPingWaitMs);
  let stopped = false;

  const judge = (target: TrunkAddress, state: AddressHealth, answered: boolean) => {
    state.pending = false;
    if (stopped || table.get(target.key) !== state) return;
    if (answered === state.up) {
      state.streak = 0;
      return;
    }
    state.streak += 1;
    if (state.streak < (state.up ? downAfter : upAfter)) return;
    state.up = answered;
    state.streak = 0;
    const message = answered
      ? "sip: a trunk address answers OPTIONS again; new calls use it"
      : "sip: a trunk address stopped answering OPTIONS; new calls skip it";
    logger[answered ? "info" : "warn"]({ address: target.key }, message);
  };

  const ping = (target: TrunkAddress, state: AddressHealth) => {
    state.pending = true;
    let settled = false;
    const settle = (answered: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      judge(target, state, answered);
    };
    // Past its wait the ping is given up: no retransmission reaches the address afterwards.
    const timer = setTimeout(() => {
      transaction.abandon();
      settle(false);
    }, waitMs);
    timer.unref();
    const flow: SipFlow = {
      transport: target.transport as SipFlow["transport"],
      address: target.address,
      port: target.port,
    };
    const request = optionsTo(target, endpoint.publicAddress, endpoint.sentBy(flow.transport));
    const transaction = endpoint.client.send(request, flow, {
      onResponse: (response) => {
        if (response.status >= 200) settle(response.status !== 503);
      },
      onFailure: () => settle(false),
    });
  };

  const tick = () => {
    const current = options.addresses();
    const keys = new Set(current.map((target) => target.key));
    for (const key of table.keys()) if (!keys.has(key)) table.delete(key);
    for (const target of current) {
      let state = table.get(target.key);
      if (!state) {
        state = { up: true, streak: 0, pending: false };
        table.set(target.key, state);
      }
      if (!state.pending) ping(target, state);
    }
  };

  const timer = setInterval(tick, intervalMs);
  timer.unref();
  // The first round goes once the caller has its handle (e.g. to name the addresses `dialable`).
  const first = setImmediate(tick);
  const untrack = trackSipTrunkHealth(() =>
    [...table].map(([address, state]) => ({ address, up: state.up })),
  );

  return {
    isUp: (key) => table.get(key)?.up ?? true,
    stop() {
      stopped = true;
      clearInterval(timer);
      clearImmediate(first);
      untrack();
      table.clear();
    },
  };
}

/**
 * An OPTIONS to the address, its Request-URI the trunk's URI (RFC 3263: the name, not the IP),
 * our Contact `sentBy` (this transport's address) over the target's transport.
 */
function optionsTo(target: TrunkAddress, ours: string, sentBy: string): SipRequest {
  const host = ours.replace(/:\d+$/, "");
  const transport = target.transport as SipFlow["transport"];
  const uri = `${target.uri.scheme}:${trunkHostPort(target.uri)}${trunkTransportParam(target.uri)}`;
  return {
    method: "OPTIONS",
    uri,
    version: "2.0",
    headers: {
      via: [],
      "max-forwards": "70",
      to: { uri, params: {} },
      from: { uri: `sip:switchboard@${ours}`, params: { tag: newTag() } },
      "call-id": `${randomBytes(16).toString("hex")}@${host}`,
      cseq: { seq: 1, method: "OPTIONS" },
      contact: [{ uri: contactUri(sentBy, transport), params: {} }],
      accept: "application/sdp",
    },
  };
}
