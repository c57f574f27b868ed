import { once } from "node:events";
import smpp, { type PDU, type PDUFields, type Session } from "smpp";
import type { SubmitFault } from "./faults.js";
import type { PduRecord } from "./records.js";

export type BindMode = "transmitter" | "receiver" | "transceiver";

/** One ESME connection (a library Session) and what the SMSC knows of it. */
export interface Peer {
  id: number;
  session: Session;
  remote: string;
  /** Set by a successful bind, cleared by unbind. */
  mode?: BindMode;
  systemId: string;
  /** Closed or being destroyed: nothing more is read from or written to it. */
  dead: boolean;
  /** Rejects what waits on this session's answers (MO deliver_sm) when it closes. */
  onClose: Set<(error: Error) => void>;
}

export const canSubmit = (peer: Peer): boolean =>
  peer.mode === "transmitter" || peer.mode === "transceiver";
export const canReceive = (peer: Peer): boolean =>
  peer.mode === "receiver" || peer.mode === "transceiver";

/** A generic_nack answering our request says "not understood" even with status 0. */
export const statusOf = (response: PDU): number =>
  response.command === "generic_nack" && response.command_status === 0
    ? smpp.ESME_RINVCMDID
    : response.command_status;

/**
 * The SMSC's sessions: writing to them with every PDU recorded, picking one to deliver to, and
 * breaking them all. The library keeps a response callback until the answer comes, forever if
 * the session closes, so waits on answers are bounded here.
 */
export class Peers {
  private readonly byId = new Map<number, Peer>();
  private nextId = 0;
  private nextPick = 0;
  /**
   * The connections are breaking (dropAfterSubmits): answers that still arrive are lost and
   * nothing new is delivered until they are gone.
   */
  breaking = false;

  constructor(private readonly pdus: PduRecord[]) {}

  add(session: Session): Peer {
    const socket = session.socket;
    const peer: Peer = {
      id: ++this.nextId,
      session,
      remote: `${socket.remoteAddress}:${socket.remotePort}`,
      systemId: "",
      dead: false,
      onClose: new Set(),
    };
    this.byId.set(peer.id, peer);
    return peer;
  }

  /** The session closed: forgets it and fails whatever waited on its answers. */
  closed(peer: Peer): void {
    peer.dead = true;
    this.byId.delete(peer.id);
    for (const reject of peer.onClose) reject(new Error(`session ${peer.id} closed`));
  }

  get(id: number): Peer | undefined {
    return this.byId.get(id);
  }

  get size(): number {
    return this.byId.size;
  }

  bound(): Peer[] {
    return [...this.byId.values()].filter((peer) => peer.mode && !peer.dead);
  }

  record(peer: Peer, direction: "in" | "out", pdu: PDU, dropped = false): void {
    this.pdus.push({
      direction,
      sessionId: peer.id,
      command: pdu.command,
      sequence: pdu.sequence_number,
      status: pdu.command_status,
      at: Date.now(),
      ...(dropped && { dropped: true as const }),
    });
  }

  /** A fault answered request `sequence` on `peer` (recorded under the fault's name). */
  recordFault(peer: Peer, fault: SubmitFault, sequence: number): void {
    this.pdus.push({
      direction: "out",
      sessionId: peer.id,
      command: fault,
      sequence,
      status: 0,
      at: Date.now(),
      fault,
    });
  }

  /** Writes `pdu`; its sequence_number, or undefined when the session cannot take it. */
  send(
    peer: Peer,
    pdu: PDU,
    onResponse?: (response: PDU) => void,
    onSent?: () => void,
  ): number | undefined {
    if (peer.dead) return undefined;
    const answered =
      onResponse &&
      ((response: PDU) => {
        if (!peer.dead && !this.breaking) onResponse(response);
      });
    if (!peer.session.send(pdu, answered, onSent && (() => onSent()))) return undefined;
    this.record(peer, "out", pdu);
    return pdu.sequence_number;
  }

  reply(peer: Peer, request: PDU, fields: PDUFields = {}, onSent?: () => void): void {
    this.send(peer, request.response(fields), undefined, onSent);
  }

  /** A live session bound to receive, taken in turn so that several binds share the load. */
  pickReceiver(systemId: string): Peer | undefined {
    if (this.breaking) return undefined;
    const candidates = [...this.byId.values()].filter(
      (peer) =>
        !peer.dead &&
        canReceive(peer) &&
        peer.systemId === systemId &&
        peer.session.socket.writable,
    );
    return candidates[this.nextPick++ % Math.max(1, candidates.length)];
  }

  /** Sends one deliver_sm and resolves with its answer's status. */
  deliver(peer: Peer, fields: PDUFields, timeoutMs: number): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const settle = () => {
        clearTimeout(timer);
        peer.onClose.delete(fail);
      };
      const fail = (error: Error) => {
        settle();
        reject(error);
      };
      const timer = setTimeout(
        () => fail(new Error(`deliver_sm unanswered after ${timeoutMs} ms`)),
        timeoutMs,
      );
      peer.onClose.add(fail);
      const sent = this.send(peer, new smpp.PDU("deliver_sm", fields), (response) => {
        settle();
        resolve(statusOf(response));
      });
      if (sent === undefined) fail(new Error(`session ${peer.id} cannot send`));
    });
  }

  /**
   * Closes every connection after what was already written (FIN, no unbind): the answers sent
   * before arrive, whatever arrives from now on is lost unanswered. Resolves when all are closed
   * (destroyed after 2 s if the peer never closes its side).
   */
  closeAll(): Promise<void> {
    return Promise.all([...this.byId.values()].map((peer) => this.close(peer))).then(
      () => undefined,
    );
  }

  /** Closes one connection as closeAll does. */
  close(peer: Peer): Promise<void> {
    peer.dead = true;
    const socket = peer.session.socket;
    if (socket.destroyed) return Promise.resolve();
    const closed = once(socket, "close");
    socket.end();
    const timer = setTimeout(() => socket.destroy(), 2_000);
    return closed.then(() => clearTimeout(timer));
  }

  /** Destroys every socket at once (no unbind, no FIN): resolves when all are closed. */
  destroyAll(): Promise<void> {
    const closing = [...this.byId.values()].map((peer) => {
      peer.dead = true;
      const socket = peer.session.socket;
      const closed = socket.destroyed ? Promise.resolve() : once(socket, "close");
      peer.session.destroy();
      return closed;
    });
    return Promise.all(closing).then(() => undefined);
  }
}
