import { countSipResponse, type Logger } from "@switchboard/kit";
import sip from "sip";
import {
  isRequest,
  responseTo,
  type SipRequest,
  type SipResponse,
  type SipHeaders,
} from "./message.js";
import { createClientTransactions, type ClientTransactionLayer } from "./client-transactions.js";
import { sipHostPort } from "./sip-host.js";
import {
  startSipTransport,
  type SipFlow,
  type SipTlsOptions,
  type SipTransport,
  type SipTransportName,
} from "./transport.js";

export interface SipRequestContext {
  /** Where the request came from (the source address and port, not what its Via says). */
  flow: SipFlow;
  /** Answers through the request's server transaction (retransmissions get the same answer). */
  respond(response: SipResponse): void;
}

/** Answers one request; a throw becomes a 500. */
export type SipRequestHandler = (request: SipRequest, context: SipRequestContext) => Promise<void>;

export interface SipEndpointOptions {
  host: string;
  port: number;
  logger: Logger;
  /** By method (`REGISTER`); any other method is answered 405 with the handled ones in Allow. */
  handlers: Record<string, SipRequestHandler>;
  /** What our Via says (`host`, `port`); default the bound address. */
  publicAddress?: { host?: string | undefined; port?: number | undefined };
  /** The TLS listener (SIP_TLS_PORT, its certificate and key) and the trunk's CA. */
  tls?: SipTlsOptions | undefined;
  /** Peers a TCP/TLS connection may be opened to (the trunk); phones are never dialled. */
  dialable?(flow: SipFlow): boolean;
  /** How long a quiet TCP/TLS connection is kept (the transport's default: 65 minutes). */
  streamIdleMs?: number;
  /** T1 of the client transactions (RFC 3261's 500 ms unless a test shortens it). */
  t1Ms?: number;
}

export interface SipEndpoint {
  readonly transport: SipTransport;
  /** The client transactions (requests we send); responses to them are dispatched here. */
  readonly client: ClientTransactionLayer;
  /** `host:port` our Via and Contact say (over UDP and TCP; an IPv6 host in brackets). */
  readonly publicAddress: string;
  /** `host:port` our Via and Contact say over `transport` (TLS: the TLS port). */
  sentBy(transport: SipTransportName): string;
  /** Adds (or replaces) the handler of a method. */
  handle(method: string, handler: SipRequestHandler): void;
  /**
   * The process is stopping (it finishes its calls, then goes): from now on OPTIONS is answered
   * 503 with `Retry-After: retryAfterSeconds`, so that a SIP edge's dispatcher (which probes with
   * OPTIONS) sends this replica no new requests; the rest is answered as before.
   */
  drain(retryAfterSeconds: number): void;
  /** Takes no more messages, lets the requests in hand be answered, then closes the sockets. */
  stop(): Promise<void>;
}

/**
 * The server side of RFC 3261 §17 on top of the transport: each request gets a server
 * transaction (the `sip` package's state machines: a retransmitted request is answered with the
 * last response, and the transaction lives on timer J), then its method's handler. OPTIONS is
 * answered 200 unless a handler takes it (503 once draining); ACK has no response.
 */
export async function startSipEndpoint(options: SipEndpointOptions): Promise<SipEndpoint> {
  const { logger } = options;
  const handlers: Record<string, SipRequestHandler> = { ...options.handlers };
  const allow = () => [...new Set(["OPTIONS", ...Object.keys(handlers)])].join(", ");
  const inFlight = new Set<Promise<void>>();
  let accepting = true;
  /** Set while draining: the Retry-After of the 503 to OPTIONS. */
  let drainingRetryAfter: number | undefined;
  // Set once the sockets are bound (responses are only ever sent after that).
  const bound: { transport?: SipTransport } = {};

  // The library opens a connection for a transaction through this; server transactions are
  // given theirs, so nothing should ever ask.
  const transactions = sip.makeTransactionLayer({}, () => {
    throw new Error("sip: the endpoint opens no connections");
  });

  const onRequest = (request: SipRequest, flow: SipFlow) => {
    const keyed = keyedBySource(request, flow);
    const existing = transactions.getServer(keyed);
    if (existing) {
      existing.message(keyed);
      return;
    }
    if (request.method === "ACK") {
      // The ACK of a 2xx is no transaction's (RFC 3261 §17.1.1.3): its handler, if any, hears it.
      handlers
        .ACK?.(request, { flow, respond: () => undefined })
        .catch((error: unknown) => logger.error({ err: error }, "sip: an ACK handler failed"));
      return;
    }
    const target = responseFlow(request, flow);
    const transaction = transactions.createServerTransaction(keyed, {
      protocol: flow.transport.toUpperCase(),
      send: (message) => {
        if (!bound.transport?.send(message, target)) {
          logger.debug({ method: request.method }, "sip: a response found no connection");
        }
      },
      release: () => undefined,
    });
    let answered = false;
    const respond = (response: SipResponse) => {
      if (response.status >= 200 && !answered) {
        answered = true;
        countSipResponse(request.method, response.status);
      }
      transaction.send(response);
    };
    const handler = handlers[request.method];
    const draining = request.method === "OPTIONS" && drainingRetryAfter !== undefined;
    const work = draining
      ? Promise.resolve(
          respond(responseTo(request, 503, { "retry-after": String(drainingRetryAfter) })),
        )
      : handler
        ? handler(request, { flow, respond })
        : Promise.resolve(
            respond(
              responseTo(request, request.method === "OPTIONS" ? 200 : 405, { allow: allow() }),
            ),
          );
    const tracked = work
      .catch((error: unknown) => {
        logger.error({ err: error, method: request.method }, "sip: a request failed");
        respond(responseTo(request, 500));
      })
      .finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
  };

  const sentBy = (transport: SipTransportName) =>
    transport === "tls" && tlsAddress ? tlsAddress : publicAddress;
  const client = createClientTransactions({
    sentBy,
    send: (message, flow, onFailed) => bound.transport?.send(message, flow, onFailed) ?? false,
    logger,
    ...(options.t1Ms !== undefined ? { t1Ms: options.t1Ms } : {}),
  });
  let publicAddress = "";
  let tlsAddress = "";

  const running = await startSipTransport({
    host: options.host,
    port: options.port,
    tls: options.tls,
    ...(options.dialable ? { dialable: options.dialable } : {}),
    streamIdleMs: options.streamIdleMs,
    logger,
    onMessage: (message, flow) => {
      if (!accepting) return;
      if (isRequest(message)) onRequest(message, flow);
      else if (!client.receive(message)) {
        logger.debug({ status: message.status }, "sip: a response matched no transaction");
      }
    },
    // No transaction: the request as read is not the one sent, so a retransmission (cut the
    // same way) is answered the same way again.
    onBadRequest: (request, flow, status, reason) => {
      if (!accepting || request.method === "ACK") return;
      countSipResponse(request.method, status);
      bound.transport?.send(responseTo(request, status, {}, reason), responseFlow(request, flow));
    },
  });
  bound.transport = running;
  const publicHost = options.publicAddress?.host ?? running.host;
  publicAddress = sipHostPort(publicHost, options.publicAddress?.port || running.port);
  if (running.tlsPort !== undefined) tlsAddress = sipHostPort(publicHost, running.tlsPort);

  return {
    transport: running,
    client,
    publicAddress,
    sentBy,
    handle: (method, handler) => {
      handlers[method] = handler;
    },
    drain: (retryAfterSeconds) => {
      drainingRetryAfter = Math.max(0, Math.round(retryAfterSeconds));
    },
    stop: async () => {
      accepting = false;
      await Promise.allSettled([...inFlight]);
      client.stop();
      await running.stop();
      transactions.destroy();
    },
  };
}

/**
 * The request as the library's transaction layer sees it: that layer keys server transactions
 * by method, Call-ID and branch alone, so another sender copying a branch (a CANCEL of someone
 * else's INVITE) would take over the transaction, and the real sender's request would meet the
 * other's response as a retransmission. The branch it sees carries the source flow too (RFC
 * 3261 §17.2.3 adds the Via's sent-by; the source is what a sender cannot write).
 */
function keyedBySource(request: SipRequest, flow: SipFlow): SipRequest {
  const [top, ...rest] = request.headers.via;
  const branch = `${String(top!.params.branch ?? "")}|${flow.transport}:${flow.address}:${flow.port}`;
  return {
    ...request,
    headers: {
      ...request.headers,
      via: [{ ...top!, params: { ...top!.params, branch } }, ...rest],
    },
  };
}

/**
 * Where a response goes (RFC 3261 §18.2.2, RFC 3581): over TCP or TLS, back on the connection;
 * over UDP, to the `received` address and the `rport` port (the request's source), or the Via's
 * port when the client did not ask for rport.
 */
export function responseFlow(request: SipRequest, flow: SipFlow): SipFlow {
  if (flow.transport !== "udp") return flow;
  const via = request.headers.via[0]!;
  const rport = Number(via.params.rport);
  const port = Number.isInteger(rport) && rport > 0 ? rport : (via.port ?? 5060);
  return { transport: "udp", address: via.params.received ?? flow.address, port };
}

export type { SipHeaders };
