import { randomBytes } from "node:crypto";
import type { Logger } from "@switchboard/kit";
import type { SipMessage, SipRequest, SipResponse, Via } from "./message.js";
import type { SipFlow, SipTransportName } from "./transport.js";

/**
 * The client side of RFC 3261 §17.1 (with RFC 6026's Accepted state): our own branch ids
 * (`z9hG4bK` + 128 random bits: the `sip` package's are not unique enough on the network),
 * Timers A/B for INVITE and E/F for the rest (retransmissions over UDP only), the ACK of a
 * non-2xx final response inside the transaction, CANCEL of a pending INVITE. Responses are
 * matched by their top Via's branch and the CSeq method; the endpoint hands them in.
 */
export interface ClientTransactionEvents {
  /** Each provisional response, the final one, and (INVITE) each retransmitted 2xx. */
  onResponse(response: SipResponse): void;
  /**
   * No final response: Timer B/F fired (the TU treats it as a 408) or the request could not be
   * sent (`transport`).
   */
  onFailure(reason: "timeout" | "transport"): void;
}

export interface ClientTransaction {
  readonly branch: string;
  /** The request as sent (with its Via). */
  readonly request: SipRequest;
  /**
   * INVITE only: CANCELs it (RFC 3261 §9.1) once a provisional response came (at once when one
   * did); nothing is sent after a final response.
   */
  cancel(): void;
  /**
   * Drops the transaction here and now: no retransmission, nothing reported, a late response
   * matches nothing (a TU's own deadline, e.g. a health ping that is no use after its time).
   */
  abandon(): void;
}

export interface ClientTransactionLayer {
  /**
   * Sends `request` to `flow` in a new client transaction. The request has no Via: the layer
   * adds the top Via (our address, a new branch, rport); `via` names them instead (a branch
   * recorded before sending; a CANCEL repeating another process's INVITE).
   */
  send(
    request: SipRequest,
    flow: SipFlow,
    events: ClientTransactionEvents,
    via?: { branch: string; sentBy?: string },
  ): ClientTransaction;
  /** A response from the network; false when no transaction of ours matches it. */
  receive(response: SipResponse): boolean;
  /** Drops every transaction and its timers, and any request sent after (nothing more is reported). */
  stop(): void;
}

export interface ClientTransactionOptions {
  /** `host:port` our Via says over that transport. */
  sentBy: (transport: SipTransportName) => string;
  /** False when it cannot be sent; `onFailed` when a connection opened for it fails later. */
  send(message: SipMessage, flow: SipFlow, onFailed: () => void): boolean;
  logger: Logger;
  /** RFC 3261's T1 (500 ms); tests shorten it. */
  t1Ms?: number;
}

/** A branch: the RFC 3261 magic cookie, then 128 random bits. */
export const newClientBranch = (): string => `z9hG4bK${randomBytes(16).toString("hex")}`;

const t2Ms = 4_000;
const t4Ms = 5_000;

interface Entry {
  key: string;
  request: SipRequest;
  flow: SipFlow;
  events: ClientTransactionEvents;
  state: "calling" | "proceeding" | "accepted" | "completed" | "terminated";
  timers: Set<NodeJS.Timeout>;
  ack?: SipRequest;
  cancelWanted: boolean;
  cancelSent: boolean;
}

export function createClientTransactions(
  options: ClientTransactionOptions,
): ClientTransactionLayer {
  const { logger } = options;
  const t1 = options.t1Ms ?? 500;
  const entries = new Map<string, Entry>();
  let stopped = false;
  const keyOf = (branch: string, method: string) => `${branch}|${method.toUpperCase()}`;

  const later = (entry: Entry, ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      entry.timers.delete(timer);
      run();
    }, ms);
    timer.unref();
    entry.timers.add(timer);
  };
  const terminate = (entry: Entry) => {
    entry.state = "terminated";
    for (const timer of entry.timers) clearTimeout(timer);
    entry.timers.clear();
    entries.delete(entry.key);
  };
  const failed = (entry: Entry, reason: "timeout" | "transport") => {
    if (entry.state === "terminated") return;
    terminate(entry);
    entry.events.onFailure(reason);
  };
  const transmit = (entry: Entry, message: SipMessage) => {
    if (!options.send(message, entry.flow, () => failed(entry, "transport"))) {
      failed(entry, "transport");
    }
  };

  /** Retransmits the request while it is unanswered (UDP): A/E start at T1 and double. */
  const retransmit = (entry: Entry, interval: number, cap: number) => {
    if (entry.flow.transport !== "udp") return;
    later(entry, interval, () => {
      const invite = entry.request.method === "INVITE";
      if (entry.state === "calling" || (!invite && entry.state === "proceeding")) {
        transmit(entry, entry.request);
        const next = entry.state === "proceeding" ? t2Ms : Math.min(interval * 2, cap);
        retransmit(entry, next, cap);
      }
    });
  };

  const start = (
    request: SipRequest,
    flow: SipFlow,
    events: ClientTransactionEvents,
    via?: { branch: string; sentBy?: string },
  ) => {
    const branch = via?.branch ?? newClientBranch();
    const sent: SipRequest = {
      ...request,
      headers: {
        ...request.headers,
        via: [topVia(via?.sentBy ?? options.sentBy(flow.transport), flow, branch)],
      },
    };
    const entry: Entry = {
      key: keyOf(branch, request.method),
      request: sent,
      flow,
      events,
      state: "calling",
      timers: new Set(),
      cancelWanted: false,
      cancelSent: false,
    };
    // A request after stop (work that was still under way) is dropped as stop's were.
    if (stopped) {
      entry.state = "terminated";
      return entry;
    }
    entries.set(entry.key, entry);
    const invite = request.method === "INVITE";
    retransmit(entry, t1, invite ? Number.POSITIVE_INFINITY : t2Ms);
    // Timer B (INVITE, in Calling) / Timer F (non-INVITE): 64·T1 without a final response.
    later(entry, 64 * t1, () => {
      if (entry.state === "calling" || (!invite && entry.state === "proceeding")) {
        failed(entry, "timeout");
      }
    });
    transmit(entry, sent);
    return entry;
  };

  const sendCancel = (entry: Entry) => {
    if (entry.cancelSent) return;
    entry.cancelSent = true;
    const cancel = cancelFor(entry.request);
    // The CANCEL is its own non-INVITE transaction with the INVITE's branch (RFC 3261 §9.1).
    const cancelEntry: Entry = {
      key: keyOf(String(cancel.headers.via[0]!.params.branch), "CANCEL"),
      request: cancel,
      flow: entry.flow,
      events: { onResponse: () => undefined, onFailure: () => undefined },
      state: "calling",
      timers: new Set(),
      cancelWanted: false,
      cancelSent: false,
    };
    entries.set(cancelEntry.key, cancelEntry);
    retransmit(cancelEntry, t1, t2Ms);
    later(cancelEntry, 64 * t1, () => terminate(cancelEntry));
    transmit(cancelEntry, cancel);
  };

  const onInviteResponse = (entry: Entry, response: SipResponse) => {
    const status = response.status;
    if (status < 200) {
      if (entry.state !== "calling" && entry.state !== "proceeding") return;
      entry.state = "proceeding";
      if (entry.cancelWanted) sendCancel(entry);
      entry.events.onResponse(response);
      return;
    }
    if (status < 300) {
      if (entry.state === "completed") return;
      const first = entry.state !== "accepted";
      if (first) {
        entry.state = "accepted";
        for (const timer of entry.timers) clearTimeout(timer);
        entry.timers.clear();
        // RFC 6026 Timer M: 2xx retransmissions reach the TU (which ACKs each) for 64·T1.
        later(entry, 64 * t1, () => terminate(entry));
      }
      entry.events.onResponse(response);
      return;
    }
    if (entry.state === "completed") {
      if (entry.ack) transmit(entry, entry.ack);
      return;
    }
    if (entry.state === "accepted") return;
    entry.state = "completed";
    for (const timer of entry.timers) clearTimeout(timer);
    entry.timers.clear();
    entry.ack = ackForFailure(entry.request, response);
    transmit(entry, entry.ack);
    // Timer D: absorb retransmitted finals for 32 s over UDP.
    later(entry, entry.flow.transport === "udp" ? 32_000 : 0, () => terminate(entry));
    entry.events.onResponse(response);
  };

  const onOtherResponse = (entry: Entry, response: SipResponse) => {
    if (entry.state === "completed") return;
    if (response.status < 200) {
      entry.state = "proceeding";
      entry.events.onResponse(response);
      return;
    }
    entry.state = "completed";
    for (const timer of entry.timers) clearTimeout(timer);
    entry.timers.clear();
    // Timer K: absorb retransmitted finals for T4 over UDP.
    later(entry, entry.flow.transport === "udp" ? t4Ms : 0, () => terminate(entry));
    entry.events.onResponse(response);
  };

  return {
    send(request, flow, events, via) {
      const entry = start(request, flow, events, via);
      return {
        branch: String(entry.request.headers.via[0]!.params.branch),
        request: entry.request,
        cancel: () => {
          if (entry.request.method !== "INVITE" || entry.cancelWanted) return;
          entry.cancelWanted = true;
          if (entry.state === "proceeding") sendCancel(entry);
        },
        abandon: () => terminate(entry),
      };
    },
    receive(response) {
      const branch = response.headers.via[0]?.params.branch;
      if (typeof branch !== "string") return false;
      const entry = entries.get(keyOf(branch, response.headers.cseq.method));
      if (!entry) return false;
      try {
        if (entry.request.method === "INVITE") onInviteResponse(entry, response);
        else onOtherResponse(entry, response);
      } catch (error) {
        logger.error({ err: error }, "sip: a client transaction's handler failed");
      }
      return true;
    },
    stop() {
      stopped = true;
      for (const entry of [...entries.values()]) terminate(entry);
    },
  };
}

/** A Via of ours: `sentBy` (`host[:port]`), the flow's transport, `branch`, rport asked. */
export function topVia(sentBy: string, flow: SipFlow, branch: string): Via {
  const match = /^(.*):(\d+)$/.exec(sentBy);
  return {
    version: "2.0",
    protocol: flow.transport.toUpperCase(),
    host: match ? match[1]! : sentBy,
    ...(match ? { port: Number(match[2]) } : {}),
    params: { branch, rport: null },
  };
}

/** The headers a CANCEL or a non-2xx ACK copy from the INVITE (RFC 3261 §9.1, §17.1.1.3). */
function sameHop(request: SipRequest, method: string): SipRequest {
  return {
    method,
    uri: request.uri,
    version: "2.0",
    headers: {
      via: [request.headers.via[0]!],
      "max-forwards": "70",
      to: request.headers.to,
      from: request.headers.from,
      "call-id": request.headers["call-id"],
      cseq: { seq: request.headers.cseq.seq, method },
      ...(request.headers.route !== undefined ? { route: request.headers.route } : {}),
    },
  };
}

/** CANCEL of a pending INVITE: the same Request-URI, top Via, Call-ID, From, To, CSeq number. */
export const cancelFor = (invite: SipRequest): SipRequest => sameHop(invite, "CANCEL");

/** The ACK of a non-2xx final response: as the INVITE, with the response's To (its tag). */
export function ackForFailure(invite: SipRequest, response: SipResponse): SipRequest {
  const ack = sameHop(invite, "ACK");
  ack.headers.to = response.headers.to;
  return ack;
}
