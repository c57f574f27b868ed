import { once } from "node:events";
import type { AddressInfo } from "node:net";
import smpp, { type PDU } from "smpp";
import type { TestSmsc, TestSmscOptions } from "./api.js";
import { moFields } from "./mo.js";
import { defaultOutcome } from "./outcomes.js";
import { Peers, statusOf, type BindMode, type Peer } from "./peers.js";
import { ReceiptDispatcher } from "./receipts.js";
import type {
  BindCommand,
  BindRecord,
  PduRecord,
  ReceiptAttempt,
  RefusedSubmit,
  SubmitRecord,
} from "./records.js";
import { createSubmitHandler } from "./submit-handler.js";

const bindModes: Readonly<Record<BindCommand, BindMode>> = {
  bind_transmitter: "transmitter",
  bind_receiver: "receiver",
  bind_transceiver: "transceiver",
};

const isBind = (command: string): command is BindCommand => command in bindModes;

/**
 * Starts an SMPP 3.4 SMSC on loopback for the smpp carrier's tests, benchmark and walkthrough:
 * one account, a scripted outcome per submit, delivery receipts held and re-sent like a real
 * SMSC's, MO messages on demand, and faults (throttling, refused binds, broken connections,
 * submits accepted but answered late, never or with bytes that are not a PDU).
 * It is the server side of the `smpp` library, whose decoding of what the ESME sends is an
 * independent check of our encoder.
 */
export async function startTestSmsc(options: TestSmscOptions): Promise<TestSmsc> {
  const host = options.host ?? "127.0.0.1";
  const responseTimeoutMs = options.responseTimeoutMs ?? 3000;
  const submitDelayMs = options.submitDelayMs ?? 0;
  const emit = options.onEvent ?? (() => undefined);

  const pdus: PduRecord[] = [];
  const submits: SubmitRecord[] = [];
  const throttled: RefusedSubmit[] = [];
  const refused: RefusedSubmit[] = [];
  const receipts: ReceiptAttempt[] = [];
  const binds: BindRecord[] = [];
  const peers = new Peers(pdus);
  let refusing = false;
  let nextRef = 0;

  const dispatcher = new ReceiptDispatcher(
    {
      pick: (systemId) => peers.pickReceiver(systemId)?.id,
      send: (sessionId, fields, onStatus) => {
        const peer = peers.get(sessionId);
        if (!peer) return undefined;
        const pdu = new smpp.PDU("deliver_sm", fields);
        return peers.send(peer, pdu, (response) => onStatus(statusOf(response)));
      },
      attempt: (attempt, settled) => {
        if (settled) emit({ type: "receipt", attempt });
        else receipts.push(attempt);
      },
    },
    options.receiptFormat ?? "both",
    { responseTimeoutMs, retryMs: options.receiptRetryMs ?? 500 },
  );
  const submitHandler = createSubmitHandler({
    peers,
    dispatcher,
    outcome: options.outcome ?? defaultOutcome,
    receiptDelayMs: options.receiptDelayMs ?? 50,
    slowResponseMs: options.slowResponseMs ?? 5_000,
    maxPerSecond: options.maxPerSecond,
    emit,
    submits,
    throttled,
    refused,
  });

  const onBind = (peer: Peer, pdu: PDU, command: BindCommand) => {
    const systemId = pdu.system_id ?? "";
    let status = 0;
    if (peer.mode) status = smpp.ESME_RALYBND;
    else if (refusing) status = smpp.ESME_RBINDFAIL;
    else if (systemId !== options.systemId) status = smpp.ESME_RINVSYSID;
    else if (pdu.password !== options.password) status = smpp.ESME_RINVPASWD;
    const bind: BindRecord = { sessionId: peer.id, command, systemId, status, at: Date.now() };
    binds.push(bind);
    // A bind_resp with an error status is header only: the library drops the system_id.
    peers.reply(peer, pdu, { command_status: status, system_id: "SWITCHBOARD_SMSC" });
    if (status === 0) {
      peer.mode = bindModes[command];
      peer.systemId = systemId;
    }
    emit({ type: "bind", bind });
    if (status === 0) dispatcher.pump();
  };

  const onPdu = (peer: Peer, pdu: PDU) => {
    const dropped = pdu.command === "submit_sm" && !peer.dead && submitHandler.dropsThis();
    if (dropped) {
      peers.record(peer, "in", pdu, true);
      return;
    }
    if (peer.dead || peers.breaking) {
      peers.record(peer, "in", pdu, true);
      if (pdu.command === "submit_sm") submitHandler.lost();
      return;
    }
    peers.record(peer, "in", pdu);
    if (pdu.isResponse()) return; // answers reach their callbacks through the library
    const command = pdu.command;
    if (isBind(command)) return onBind(peer, pdu, command);
    switch (command) {
      case "enquire_link":
        return peers.reply(peer, pdu);
      case "unbind":
        peer.mode = undefined;
        emit({ type: "unbind", sessionId: peer.id });
        return peers.reply(peer, pdu, {}, () => peer.session.close());
      case "submit_sm":
        if (!submitDelayMs) return submitHandler.submit(peer, pdu);
        setTimeout(() => {
          if (!peer.dead) submitHandler.submit(peer, pdu);
        }, submitDelayMs);
        return;
      case "query_sm":
        return submitHandler.query(peer, pdu);
      default:
        // A command the library does not know arrives as "unknown"; those it knows but this
        // SMSC does not serve (data_sm, submit_multi, cancel_sm...) are refused the same way.
        peers.send(
          peer,
          new smpp.PDU("generic_nack", {
            sequence_number: pdu.sequence_number,
            command_status: smpp.ESME_RINVCMDID,
          }),
        );
    }
  };

  const server = smpp.createServer((session) => {
    session.socket.setNoDelay(true);
    const peer = peers.add(session);
    emit({ type: "session", sessionId: peer.id, state: "open", remote: peer.remote });
    session.on("pdu", (pdu) => onPdu(peer, pdu));
    // A socket error (ECONNRESET) is followed by close. After a PDU it cannot parse the library
    // reads nothing more from the session, so it is ended.
    session.on("error", () => session.destroy());
    session.on("close", () => {
      peers.closed(peer);
      dispatcher.sessionClosed(peer.id);
      emit({ type: "session", sessionId: peer.id, state: "closed", remote: peer.remote });
    });
  });
  server.listen(options.port ?? 0, host);
  await once(server, "listening");
  // Errors after listening (none expected on loopback) must not crash the test process.
  server.on("error", () => undefined);
  const port = (server.address() as AddressInfo).port;

  const waitFor = async <T>(
    predicate: (smsc: TestSmsc) => T | undefined | null | false,
    timeoutMs = 5000,
  ): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = predicate(smsc);
      if (value) return value;
      if (Date.now() > deadline) throw new Error(`waitFor: not true within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  const smsc: TestSmsc = {
    host,
    port,
    pdus,
    submits,
    throttled,
    refused,
    receipts,
    binds,
    accepted: () => submits.length,
    submitsPerSecond: () => submitHandler.peakPerSecond(),
    bound: () => peers.bound().length,
    heldReceipts: () => dispatcher.held,
    waitFor,
    async sendMo(request) {
      const fields = moFields(request, ++nextRef);
      const peer = await waitFor(
        () => peers.pickReceiver(options.systemId),
        responseTimeoutMs,
      ).catch(() => {
        throw new Error("sendMo: no session is bound to receive");
      });
      const statuses: number[] = [];
      for (const part of fields) statuses.push(await peers.deliver(peer, part, responseTimeoutMs));
      emit({ type: "mo", sessionId: peer.id, request, statuses });
      return { statuses, sessionId: peer.id };
    },
    dropConnections: () => peers.destroyAll(),
    dropAfterSubmits: (n) => submitHandler.dropAfter(n),
    faultSubmits: (fault, count = 1) => submitHandler.faultNext(fault, count),
    refuseBinds(on) {
      refusing = on;
    },
    setMaxPerSecond: (limit) => submitHandler.setMaxPerSecond(limit),
    async stop({ unbind = false } = {}) {
      dispatcher.stop();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      if (unbind) {
        const answered = peers.bound().map(
          (peer) =>
            new Promise<void>((resolve) => {
              peer.onClose.add(() => resolve());
              if (peers.send(peer, new smpp.PDU("unbind"), () => resolve()) === undefined) {
                resolve();
              }
            }),
        );
        const second = new Promise((resolve) => setTimeout(resolve, 1000).unref());
        await Promise.race([Promise.all(answered), second]);
      }
      await peers.destroyAll();
      await closed;
    },
  };
  return smsc;
}
