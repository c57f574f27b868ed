import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { createServer, isIPv6, type Server, type Socket } from "node:net";
import type { Logger } from "@switchboard/kit";
import sip from "sip";
import {
  bodyCutShort,
  checkMessage,
  isRequest,
  maxMessageBytes,
  parseMessage,
  serialize,
  type SipMessage,
  type SipRequest,
  type SipResponse,
} from "./message.js";

/** Where a message came from or goes to: the peer's address as the network shows it. */
export interface SipFlow {
  transport: "udp" | "tcp";
  address: string;
  port: number;
}

export interface SipTransportOptions {
  host: string;
  /** 0 picks a free port (the same for UDP and TCP). */
  port: number;
  logger: Logger;
  /** Every valid message received; requests with `received`/`rport` set on their top Via. */
  onMessage(message: SipRequest | SipResponse, flow: SipFlow): void;
  /**
   * A request whose Content-Length runs past its datagram (RFC 3261 §18.3: answered 400), its
   * top Via stamped like any request's; such a response is dropped here.
   */
  onTruncatedRequest(request: SipRequest, flow: SipFlow): void;
}

export interface SipTransport {
  /** The bound address (UDP and TCP share the port). */
  readonly host: string;
  readonly port: number;
  /**
   * Sends over UDP to the flow's address, or over TCP on the connection open with it
   * (false when there is none any more: this layer opens no connections yet).
   */
  send(message: SipMessage, flow: SipFlow): boolean;
  /** Closes the socket, the listener and every TCP connection. */
  stop(): Promise<void>;
}

/** A TCP connection with no message for this long is closed (RFC 5626 keep-alives are sooner). */
const idleTcpMs = 5 * 60_000;
const maxTcpConnections = 10_000;

/**
 * RFC 3261 §18 over UDP and TCP on one host:port. Requests get `received` (and `rport`, when
 * the client asked for it, RFC 3581) on their top Via, so a response goes back where the request
 * came from, through a NAT too. Anything that is not a valid SIP message is dropped (a TCP
 * stream that overflows is closed).
 */
export async function startSipTransport(options: SipTransportOptions): Promise<SipTransport> {
  const { logger } = options;
  const connections = new Map<string, Socket>();
  const flowKey = (address: string, port: number) => `${address}|${port}`;

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
    const flow: SipFlow = { transport: "udp", address: remote.address, port: remote.port };
    if (bodyCutShort(data, message)) {
      logger.debug({ address: remote.address, port: remote.port }, "sip: a datagram cut short");
      if (!isRequest(message)) return;
      stampVia(message, flow);
      guarded(() => options.onTruncatedRequest(message, flow));
      return;
    }
    deliver(message, flow);
  };

  const tcp: Server = createServer((socket) => {
    const address = socket.remoteAddress;
    const port = socket.remotePort;
    if (!address || !port || connections.size >= maxTcpConnections) {
      socket.destroy();
      return;
    }
    const key = flowKey(address, port);
    connections.set(key, socket);
    const flow: SipFlow = { transport: "tcp", address, port };
    socket.setEncoding("binary");
    socket.setNoDelay(true);
    socket.setTimeout(idleTcpMs, () => socket.destroy());
    // Bytes taken since the last message: the framer keeps a body whose Content-Length is not a
    // number forever, so a stream that goes on without a message is closed here.
    let pending = 0;
    const frame = sip.makeStreamParser(
      (parsed) => {
        pending = 0;
        const message = checkMessage(parsed);
        if (message) deliver(message, flow);
      },
      () => {
        logger.debug({ address, port }, "sip: closed a tcp stream that overflowed");
        socket.destroy();
      },
      maxMessageBytes,
      maxMessageBytes,
    );
    socket.on("data", (chunk: string) => {
      pending += chunk.length;
      try {
        frame(chunk);
      } catch {
        socket.destroy();
        return;
      }
      if (pending > 2 * maxMessageBytes) socket.destroy();
    });
    socket.on("error", () => socket.destroy());
    socket.on("close", () => {
      if (connections.get(key) === socket) connections.delete(key);
    });
  });

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
      await listenTcp(tcp, options.host, port);
      bound = { udp: socket, port };
    } catch (error) {
      socket.close();
      if (attempt >= attempts || (error as NodeJS.ErrnoException).code !== "EADDRINUSE")
        throw error;
    }
  }
  const { udp, port } = bound;
  udp.on("message", onDatagram);
  udp.on("error", (error) => logger.warn({ err: error }, "sip: udp socket error"));
  tcp.on("error", (error) => logger.warn({ err: error }, "sip: tcp listener error"));

  return {
    host: options.host,
    port,
    send: (message, flow) => {
      const wire = serialize(message);
      if (flow.transport === "udp") {
        udp.send(Buffer.from(wire, "binary"), flow.port, flow.address, (error) => {
          if (error) logger.debug({ err: error }, "sip: a datagram could not be sent");
        });
        return true;
      }
      const socket = connections.get(flowKey(flow.address, flow.port));
      if (!socket || socket.destroyed) return false;
      socket.write(wire, "binary");
      return true;
    },
    stop: async () => {
      const closed = new Promise<void>((resolve) => tcp.close(() => resolve()));
      for (const socket of connections.values()) socket.destroy();
      connections.clear();
      await Promise.all([closed, new Promise<void>((resolve) => udp.close(() => resolve()))]);
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

function listenTcp(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host, port, exclusive: true }, () => {
      server.off("error", reject);
      resolve();
    });
  });
}
