import { EventEmitter } from "node:events";
import net from "node:net";
import tls from "node:tls";
import smpp from "smpp";

/** The 16 octets of command_length, command_id, command_status and sequence_number. */
const headerLength = 16;

/** The SMSC sent bytes that are not a PDU we can read: the stream cannot be trusted past them. */
export class MalformedPduError extends Error {
  override readonly name = "MalformedPduError";
}

/**
 * Cuts a byte stream into PDUs and decodes them with the `smpp` codec. A frame it cannot read
 * (a command_length shorter than the header or longer than PDU.maxLength, a body the codec
 * refuses, a response to a command it does not know) ends the stream: past it the framing is
 * lost, so the caller drops the connection after the PDUs that came before it.
 */
export class PduFramer {
  private buffered: Buffer = Buffer.alloc(0);
  private broken = false;

  push(chunk: Buffer): { pdus: smpp.PDU[]; malformed?: MalformedPduError } {
    const pdus: smpp.PDU[] = [];
    if (this.broken) return { pdus };
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    try {
      while (this.buffered.length >= 4) {
        const length = this.buffered.readUInt32BE(0);
        if (length < headerLength || length > smpp.PDU.maxLength) {
          throw new MalformedPduError(`a PDU with command_length ${length}`);
        }
        if (this.buffered.length < length) break;
        const frame = this.buffered.subarray(0, length);
        this.buffered = this.buffered.subarray(length);
        pdus.push(decode(frame));
      }
    } catch (error) {
      if (!(error instanceof MalformedPduError)) throw error;
      this.broken = true;
      return { pdus, malformed: error };
    }
    return { pdus };
  }
}

function decode(frame: Buffer): smpp.PDU {
  let pdu: smpp.PDU;
  try {
    pdu = new smpp.PDU(frame);
  } catch (error) {
    throw new MalformedPduError(`a PDU the codec cannot read: ${(error as Error).message}`);
  }
  if (pdu.command === "unknown" && pdu.isResponse()) {
    throw new MalformedPduError(
      `a response with unknown command_id 0x${pdu.command_id.toString(16)}`,
    );
  }
  return pdu;
}

export interface PduConnectionEvents {
  /** Connected (after the TLS handshake with `tls`): PDUs can be sent. */
  ready: [];
  pdu: [pdu: smpp.PDU];
  /** Unreadable bytes arrived; the connection is already destroyed. */
  malformed: [error: MalformedPduError];
  error: [error: Error];
  close: [];
}

/**
 * One TCP (or TLS) connection to the SMSC carrying PDUs: the `smpp` library's codec with our
 * own framing, because the library's session stops reading for good after a PDU it cannot
 * parse and only reports an error, which leaves a bind deaf until a timeout notices.
 */
export class PduConnection extends EventEmitter<PduConnectionEvents> {
  private readonly socket: net.Socket;
  private readonly framer = new PduFramer();
  private sequence = 0;

  constructor(options: { host: string; port: number; tls: boolean }) {
    super();
    const { host, port } = options;
    this.socket = options.tls
      ? tls.connect({ host, port, servername: host }, () => this.emit("ready"))
      : net.connect({ host, port }, () => this.emit("ready"));
    this.socket.setNoDelay(true);
    this.socket.on("data", (chunk: Buffer) => this.read(chunk));
    this.socket.on("error", (error) => this.emit("error", error));
    this.socket.on("close", () => this.emit("close"));
  }

  /**
   * Hands `pdu` to the socket, numbering a request that has none. False, with nothing written,
   * when the connection can no longer take it; once true the SMSC may receive it.
   */
  send(pdu: smpp.PDU): boolean {
    if (this.socket.destroyed || !this.socket.writable) return false;
    if (!pdu.isResponse() && !pdu.sequence_number) {
      this.sequence = this.sequence >= 0x7fffffff ? 1 : this.sequence + 1;
      pdu.sequence_number = this.sequence;
    }
    this.socket.write(pdu.toBuffer());
    return true;
  }

  /** Closes after what was written (FIN). */
  close(): void {
    this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    const { pdus, malformed } = this.framer.push(chunk);
    for (const pdu of pdus) {
      if (this.socket.destroyed) return;
      this.emit("pdu", pdu);
    }
    if (malformed && !this.socket.destroyed) {
      this.socket.destroy();
      this.emit("malformed", malformed);
    }
  }
}
