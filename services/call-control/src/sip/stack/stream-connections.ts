import { connect as connectTcp, isIP, type Socket } from "node:net";
import { connect as connectTls } from "node:tls";
import { isRequest, maxMessageBytes, parseMessage } from "./message.js";
import { unmappedAddress } from "./sip-host.js";
import { createStreamFramer } from "./stream-framer.js";
import type { SipFlow, SipTransportOptions } from "./transport.js";

/**
 * The transport's TLS material (a dialled connection presents the listener's certificate and
 * verifies the peer against `ca`), `dialable` and `streamIdleMs`; `onMessage` takes each framed
 * message, `onBadRequest` a request that cannot be framed (answered before the close).
 */
export type StreamConnectionsOptions = Pick<
  SipTransportOptions,
  "tls" | "dialable" | "streamIdleMs" | "logger" | "onMessage" | "onBadRequest"
>;

export interface StreamConnections {
  /** Serves a connection a listener accepted. */
  accept(socket: Socket, transport: "tcp" | "tls"): void;
  /**
   * Writes to the connection held for the flow, opening one to a dialable flow (the bytes wait
   * in the socket until it is up); false when there is none to write to. `onFailed` runs when
   * the connection being opened fails.
   */
  send(wire: Buffer, flow: SipFlow, onFailed?: () => void): boolean;
  /** Closes every connection. */
  closeAll(): void;
}

/** A connection quiet this long is closed (a phone's re-REGISTER or keep-alives come sooner). */
const defaultStreamIdleMs = 65 * 60_000;
/** A connection that brought no message yet is closed after this long. */
const firstMessageMs = 60_000;
const maxStreamConnections = 10_000;
/** How long opening a connection (TCP and the TLS handshake) may take. */
const connectTimeoutMs = 5_000;

const reasons = {
  "missing-length": [400, "Missing Content-Length"],
  "bad-length": [400, "Bad Content-Length"],
  "too-large": [513, "Message Too Large"],
} as const;

/**
 * The TCP and TLS connections of the SIP transport (RFC 3261 §18): each read through its
 * Content-Length framer, held by `transport|address|port` so that a response or a request goes
 * back on the connection the peer opened; connections are opened only to `dialable` flows.
 */
export function createStreamConnections(options: StreamConnectionsOptions): StreamConnections {
  const { logger } = options;
  /** Open streams by `transport|address|port` (a dialled one under its name and its address). */
  const connections = new Map<string, Socket>();
  const streams = new Set<Socket>();
  /** What to tell when a connection being opened fails (the requests written into it). */
  const pendingFailures = new WeakMap<Socket, (() => void)[]>();
  const keyOf = (flow: SipFlow) => `${flow.transport}|${flow.address.toLowerCase()}|${flow.port}`;
  const guarded = (handle: () => void) => {
    try {
      handle();
    } catch (error) {
      logger.error({ err: error }, "sip: a message handler failed");
    }
  };

  /**
   * Reads SIP off one stream (accepted or dialled) until it closes; false when the stream was
   * refused (too many, or no peer address).
   */
  const serve = (socket: Socket, transport: "tcp" | "tls", extraKey?: string): boolean => {
    const address = socket.remoteAddress && unmappedAddress(socket.remoteAddress);
    const port = socket.remotePort;
    if (!address || !port || streams.size >= maxStreamConnections) {
      socket.destroy();
      return false;
    }
    const flow: SipFlow = { transport, address, port };
    const keys = [keyOf(flow), ...(extraKey ? [extraKey] : [])];
    for (const key of keys) connections.set(key, socket);
    streams.add(socket);
    socket.setNoDelay(true);
    socket.setTimeout(firstMessageMs, () => socket.destroy());
    let proven = false;
    const framer = createStreamFramer(maxMessageBytes);
    socket.on("data", (chunk: Buffer) => {
      for (const unit of framer.push(chunk)) {
        if (!proven && unit.kind === "message") {
          proven = true;
          socket.setTimeout(options.streamIdleMs ?? defaultStreamIdleMs);
        }
        if (unit.kind === "ping") {
          socket.write("\r\n");
          continue;
        }
        if (unit.kind === "message") {
          const message = parseMessage(unit.bytes);
          if (message) guarded(() => options.onMessage(message, flow));
          else logger.debug({ address, port, transport }, "sip: dropped a stream's message");
          continue;
        }
        logger.debug({ address, port, transport, reason: unit.reason }, "sip: closed a stream");
        if (unit.reason !== "overflow") {
          const request = parseMessage(Buffer.concat([unit.head, Buffer.from("\r\n\r\n")]));
          if (request && isRequest(request)) {
            const [status, reason] = reasons[unit.reason];
            guarded(() => options.onBadRequest(request, flow, status, reason));
          }
        }
        // Closed once the answer is written: nothing after it can be framed.
        socket.end(() => socket.destroy());
      }
    });
    socket.on("error", () => socket.destroy());
    socket.on("close", () => {
      streams.delete(socket);
      for (const key of keys) if (connections.get(key) === socket) connections.delete(key);
    });
    return true;
  };

  /** Opens a connection to a dialable flow (TLS: the peer's certificate verified). */
  const dial = (flow: SipFlow, onFailed: (() => void) | undefined): Socket => {
    const key = keyOf(flow);
    const failures: (() => void)[] = onFailed ? [onFailed] : [];
    const listen = options.tls?.listen;
    const socket: Socket =
      flow.transport === "tls"
        ? connectTls({
            host: flow.address,
            port: flow.port,
            ...(isIP(flow.address) === 0 ? { servername: flow.address } : {}),
            ...(options.tls?.ca ? { ca: options.tls.ca } : {}),
            ...(listen ? { cert: listen.cert, key: listen.key } : {}),
          })
        : connectTcp({ host: flow.address, port: flow.port });
    connections.set(key, socket);
    pendingFailures.set(socket, failures);
    const timer = setTimeout(() => socket.destroy(new Error("connect timeout")), connectTimeoutMs);
    timer.unref();
    let connected = false;
    let failed = false;
    socket.once(flow.transport === "tls" ? "secureConnect" : "connect", () => {
      connected = true;
      clearTimeout(timer);
      failures.length = 0;
      pendingFailures.delete(socket);
      connections.delete(key);
      serve(socket, flow.transport === "tls" ? "tls" : "tcp", key);
    });
    // `on`, not `once`: a second error (a write into the dead socket) must find a listener.
    socket.on("error", (error) => {
      clearTimeout(timer);
      if (connected || failed) return;
      failed = true;
      logger.warn(
        { err: error, transport: flow.transport, address: flow.address, port: flow.port },
        "sip: could not connect",
      );
      if (connections.get(key) === socket) connections.delete(key);
      for (const report of failures.splice(0)) guarded(report);
      socket.destroy();
    });
    return socket;
  };

  return {
    accept: (socket, transport) => {
      serve(socket, transport);
    },
    send(wire, flow, onFailed) {
      let socket = connections.get(keyOf(flow));
      if (socket?.destroyed) socket = undefined;
      if (!socket) {
        if (!options.dialable?.(flow)) return false;
        socket = dial(flow, onFailed);
      } else if (onFailed) {
        pendingFailures.get(socket)?.push(onFailed);
      }
      socket.write(wire);
      return true;
    },
    closeAll() {
      for (const socket of connections.values()) socket.destroy();
      for (const socket of streams) socket.destroy();
      connections.clear();
      streams.clear();
    },
  };
}
