import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { createServer, isIPv4, isIPv6, type Server } from "node:net";
import {
  createServer as createTlsServer,
  type Server as TlsServer,
  type TLSSocket,
} from "node:tls";
import type { Logger } from "@switchboard/kit";
import {
  bodyCutShort,
  isRequest,
  parseMessage,
  serialize,
  type SipMessage,
  type SipRequest,
  type SipResponse,
} from "./message.js";
import { unmappedAddress } from "./sip-host.js";
import { createStreamConnections } from "./stream-connections.js";

/** RFC 3261 §18's transports, as Via names them in lower case. */
export type SipTransportName = "udp" | "tcp" | "tls";

/** Where a message came from or goes to: the peer's address as the network shows it. */
export interface SipFlow {
  transport: SipTransportName;
  /** An IPv4 or IPv6 address (no brackets; an IPv4-mapped one as its IPv4 address), or a name. */
  address: string;
  port: number;
}

/** The TLS listener (SIP_TLS_PORT) and the TLS connections this endpoint opens. */
export interface SipTlsOptions {
  /**
   * The listener: its port (0 picks a free one), the PEM certificate chain and private key it
   * presents (also as client certificate to the trunk).
   */
  listen?: { port: number; cert: Buffer; key: Buffer } | undefined;
  /** PEM CAs a TLS connection we open (to the trunk) must chain to; default the system's. */
  ca?: Buffer | undefined;
}

export interface SipTransportOptions {
  /** The address bound: IPv4, or IPv6 without brackets (`::` takes IPv4 peers too). */
  host: string;
  /** 0 picks a free port (the same for UDP and TCP). */
  port: number;
  /** A TLS listener too (its own port), and TLS connections to `dialable` peers. */
  tls?: SipTlsOptions | undefined;
  /**
   * Whether a TCP/TLS connection may be opened to a flow no connection serves yet (the trunk):
   * other peers (phones) are reached only over the connection they opened. Default: none.
   */
  dialable?(flow: SipFlow): boolean;
  /**
   * How long a TCP/TLS connection may stay quiet once it carried a message before it is closed:
   * longer than a registration lasts, since a phone is reached over its connection (default
   * 65 minutes). One that brings no message at all is closed after 60 s.
   */
  streamIdleMs?: number | undefined;
  logger: Logger;
  /** Every valid message received; requests with `received`/`rport` set on their top Via. */
  onMessage(message: SipRequest | SipResponse, flow: SipFlow): void;
  /**
   * A request that cannot be taken as sent (RFC 3261 §18.3): its Content-Length runs past its
   * datagram, or on a stream it has none or a body over the size limit (then the connection is
   * closed once the answer is written). Answered `status` without a transaction; its top Via is
   * stamped like any request's. Such a response is dropped here.
   */
  onBadRequest(request: SipRequest, flow: SipFlow, status: 400 | 513, reason: string): void;
}

export interface SipTransport {
  /** The bound address (UDP and TCP share the port). */
  readonly host: string;
  readonly port: number;
  /** The TLS listener's port, when there is one. */
  readonly tlsPort: number | undefined;
  /**
   * Sends over UDP to the flow's address, or over TCP/TLS on the connection open with it,
   * opening one when the flow is `dialable`. False when it cannot be sent at all (no connection
   * to a peer we do not dial, an IPv6 peer of an IPv4 socket); `onFailed` runs when a connection being opened for it fails.
   */
  send(message: SipMessage, flow: SipFlow, onFailed?: () => void): boolean;
  /** Closes the sockets, the listeners and every TCP/TLS connection. */
  stop(): Promise<void>;
}

/**
 * RFC 3261 §18 over UDP and TCP on one host:port and TLS on another. Requests get `received`
 * (and `rport`, when the client asked for it, RFC 3581) on their top Via, so a response goes
 * back where the request came from, through a NAT too. On TCP and TLS, messages are framed by
 * Content-Length (`stream-framer.ts`) and a response or request goes back on the connection the
 * peer opened; connections are opened only to `dialable` peers. Anything that is not a valid SIP
 * message is dropped; a stream that cannot be framed is closed.
 */
export async function startSipTransport(options: SipTransportOptions): Promise<SipTransport> {
  const { logger } = options;

  const stampVia = (request: SipRequest, flow: SipFlow) => {
    const via = request.headers.via[0]!;
    via.params.received = flow.address;
    if (Object.hasOwn(via.params, "rport")) via.params.rport = String(flow.port);
  };
  const guarded = (handle: () => void) => {
    try {
      handle();
    } catch (error) {
      logger.error({ err: error }, "sip: a message handler failed");
    }
  };
  const deliver = (message: SipRequest | SipResponse, flow: SipFlow) => {
    if (isRequest(message)) stampVia(message, flow);
    guarded(() => options.onMessage(message, flow));
  };

  const onDatagram = (data: Buffer, remote: { address: string; port: number }) => {
    const message = parseMessage(data);
    if (!message) {
      logger.debug({ address: remote.address, port: remote.port }, "sip: dropped a datagram");
      return;
    }
    // An IPv4 peer of a dual-stack socket (`[::]`) is `::ffff:a.b.c.d` to it: its flow says a.b.c.d.
    const address = unmappedAddress(remote.address);
    const flow: SipFlow = { transport: "udp", address, port: remote.port };
    if (bodyCutShort(data, message)) {
      logger.debug({ address: remote.address, port: remote.port }, "sip: a datagram cut short");
      if (!isRequest(message)) return;
      stampVia(message, flow);
      guarded(() => options.onBadRequest(message, flow, 400, "Bad Request"));
      return;
    }
    deliver(message, flow);
  };

  const streams = createStreamConnections({
    tls: options.tls,
    ...(options.dialable ? { dialable: options.dialable } : {}),
    streamIdleMs: options.streamIdleMs,
    logger,
    onMessage: deliver,
    onBadRequest: (request, flow, status, reason) => {
      stampVia(request, flow);
      guarded(() => options.onBadRequest(request, flow, status, reason));
    },
  });
  const tcp: Server = createServer((socket) => streams.accept(socket, "tcp"));
  const tlsListen = options.tls?.listen;
  const tlsServer: TlsServer | undefined = tlsListen
    ? createTlsServer({ cert: tlsListen.cert, key: tlsListen.key }, (socket: TLSSocket) =>
        streams.accept(socket, "tls"),
      )
    : undefined;
  tlsServer?.on("tlsClientError", (error) =>
    logger.debug({ err: error }, "sip: a TLS handshake failed"),
  );

  // Port 0 lets the kernel pick the UDP port; its TCP twin may already be taken, so pick again.
  const attempts = options.port === 0 ? 20 : 1;
  let bound: { udp: UdpSocket; port: number } | undefined;
  for (let attempt = 1; !bound; attempt++) {
    const socket = createSocket({ type: isIPv6(options.host) ? "udp6" : "udp4" });
    const port = await bindUdp(socket, options.host, options.port).catch((error: unknown) => {
      socket.close();
      throw error;
    });
    try {
      await listen(tcp, options.host, port);
      bound = { udp: socket, port };
    } catch (error) {
      socket.close();
      if (attempt >= attempts || (error as NodeJS.ErrnoException).code !== "EADDRINUSE")
        throw error;
    }
  }
  const { udp, port } = bound;
  const udp6 = isIPv6(options.host);
  let tlsPort: number | undefined;
  if (tlsServer && tlsListen) {
    try {
      await listen(tlsServer, options.host, tlsListen.port);
    } catch (error) {
      udp.close();
      tcp.close();
      throw error;
    }
    tlsPort = (tlsServer.address() as { port: number }).port;
    tlsServer.on("error", (error) => logger.warn({ err: error }, "sip: tls listener error"));
  }
  udp.on("message", onDatagram);
  udp.on("error", (error) => logger.warn({ err: error }, "sip: udp socket error"));
  tcp.on("error", (error) => logger.warn({ err: error }, "sip: tcp listener error"));

  let stopped = false;
  return {
    host: options.host,
    port,
    tlsPort,
    send: (message, flow, onFailed) => {
      const wire = Buffer.from(serialize(message), "latin1");
      if (flow.transport === "udp") {
        // A udp4 socket reaches no IPv6 peer; a udp6 one reaches IPv4 peers mapped (`[::]` only).
        if (!udp6 && isIPv6(flow.address)) return false;
        const address = udp6 && isIPv4(flow.address) ? `::ffff:${flow.address}` : flow.address;
        if (stopped) return false;
        udp.send(wire, flow.port, address, (error) => {
          if (error) logger.debug({ err: error }, "sip: a datagram could not be sent");
        });
        return true;
      }
      return streams.send(wire, flow, onFailed);
    },
    stop: async () => {
      stopped = true;
      const closed = [tcp, ...(tlsServer ? [tlsServer] : [])].map(
        (server) => new Promise<void>((resolve) => server.close(() => resolve())),
      );
      streams.closeAll();
      await Promise.all([...closed, new Promise<void>((resolve) => udp.close(() => resolve()))]);
    },
  };
}

function bindUdp(socket: UdpSocket, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    socket.once("error", reject);
    socket.bind({ address: host, port, exclusive: true }, () => {
      socket.off("error", reject);
      resolve(socket.address().port);
    });
  });
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host, port, exclusive: true }, () => {
      server.off("error", reject);
      resolve();
    });
  });
}
