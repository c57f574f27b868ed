import { randomBytes } from "node:crypto";
import smpp, { type PDU } from "smpp";
import type { SmscEvent } from "./api.js";
import { answerWithFault, type SubmitFault } from "./faults.js";
import { defaultErr, messageStates, type OutcomeFunction, type Stat } from "./outcomes.js";
import { canSubmit, type Peer, type Peers } from "./peers.js";
import type { ReceiptDispatcher } from "./receipts.js";
import { peakInWindow, type RefusedSubmit, type SubmitInfo, type SubmitRecord } from "./records.js";
import { readSubmit, receiptRequested } from "./submits.js";

/** The final state an accepted submit reaches at `doneAt`, for its receipt and query_sm. */
interface Fate {
  stat: Stat;
  err: number;
  doneAt: number;
}

export interface SubmitHandlerContext {
  peers: Peers;
  dispatcher: ReceiptDispatcher;
  outcome: OutcomeFunction;
  receiptDelayMs: number;
  /** How late a `slow-response` fault answers. */
  slowResponseMs: number;
  maxPerSecond: number | undefined;
  emit: (event: SmscEvent) => void;
  submits: SubmitRecord[];
  throttled: RefusedSubmit[];
  refused: RefusedSubmit[];
}

/** submit_sm and query_sm, the rate limit, dropAfterSubmits and faultSubmits. */
export interface SubmitHandler {
  submit(peer: Peer, pdu: PDU): void;
  query(peer: Peer, pdu: PDU): void;
  /** A submit arrived while the connections were breaking: lost in flight. */
  lost(): void;
  /**
   * Whether this arriving submit is the one dropAfterSubmits loses: if so the connections start
   * breaking (after the answers already written) and the submit counts as lost.
   */
  dropsThis(): boolean;
  dropAfter(n: number): void;
  /** The next `count` accepted submits meet `fault` instead of their answer. */
  faultNext(fault: SubmitFault, count: number): void;
  setMaxPerSecond(limit: number | undefined): void;
  /** The most submits accepted in any sliding second. */
  peakPerSecond(): number;
}

export function createSubmitHandler(context: SubmitHandlerContext): SubmitHandler {
  const { peers, dispatcher, emit, receiptDelayMs } = context;
  const fates = new Map<string, Fate>();
  const seenByDestination = new Map<string, number>();
  const acceptedAt: number[] = [];
  let maxPerSecond = context.maxPerSecond;
  let dropCountdown: number | undefined;
  /** dropAfterSubmits counted its submits down: the next one to arrive is lost. */
  let dropNext = false;
  let lostInDrop = 0;
  const faults: SubmitFault[] = [];
  let nextMessage = 0;
  // Message ids unique across SMSC instances, so two tests' messages never share one.
  const idPrefix = randomBytes(3).toString("hex");

  const refuse = (
    peer: Peer,
    pdu: PDU,
    info: SubmitInfo,
    status: number,
    reason: RefusedSubmit["reason"],
  ) => {
    const entry: RefusedSubmit = { ...info, status, reason };
    (status === smpp.ESME_RTHROTTLED ? context.throttled : context.refused).push(entry);
    peers.reply(peer, pdu, { command_status: status });
    emit({ type: "refused", submit: entry });
  };

  /** Whether the sliding second before `now` already saw maxPerSecond accepted submits. */
  const overRate = (now: number) => {
    if (maxPerSecond === undefined) return false;
    let inWindow = 0;
    for (let i = acceptedAt.length - 1; i >= 0 && acceptedAt[i]! > now - 1000; i--) inWindow++;
    return inWindow >= maxPerSecond;
  };

  /**
   * dropAfterSubmits: the submit after the counted ones is lost in flight, and every connection
   * is closed after the answers already written (a destroyed socket with unread data resets the
   * connection, and the reset would throw away answers the ESME had not read yet: SMPP 3.4
   * cannot tell such a submit from one never taken). What arrives meanwhile is lost too.
   */
  const breakAfter = (): (() => void) => {
    peers.breaking = true;
    lostInDrop = 0;
    let done = false;
    const drop = () => {
      if (done) return;
      done = true;
      const sessions = peers.size;
      void peers.closeAll().then(() => {
        peers.breaking = false;
        emit({ type: "drop", sessions, lost: lostInDrop });
      });
    };
    setTimeout(drop, 100).unref();
    return drop;
  };

  return {
    submit(peer, pdu) {
      const now = Date.now();
      const info = readSubmit(pdu, peer, now);
      if (!canSubmit(peer)) return refuse(peer, pdu, info, smpp.ESME_RINVBNDSTS, "bind");
      if (overRate(now)) return refuse(peer, pdu, info, smpp.ESME_RTHROTTLED, "rate");
      const seen = (seenByDestination.get(info.destination) ?? 0) + 1;
      seenByDestination.set(info.destination, seen);
      const outcome = context.outcome(info, { seen });
      if (typeof outcome === "object" && "status" in outcome && outcome.status !== 0) {
        return refuse(peer, pdu, info, outcome.status, "outcome");
      }
      const stat = typeof outcome === "object" && "stat" in outcome ? outcome.stat : "DELIVRD";
      const err = typeof outcome === "object" && "err" in outcome ? outcome.err : undefined;
      const fate: Fate = { stat, err: err ?? defaultErr[stat], doneAt: now + receiptDelayMs };
      const wanted =
        outcome !== "no-receipt" && receiptRequested(info.registeredDelivery, stat === "DELIVRD");
      const messageId = idPrefix + (++nextMessage).toString(16).padStart(8, "0");
      const submit: SubmitRecord = { ...info, messageId, receipt: wanted ? stat : "none" };
      context.submits.push(submit);
      acceptedAt.push(now);
      fates.set(messageId, fate);
      if (dropCountdown !== undefined && --dropCountdown === 0) {
        dropCountdown = undefined;
        dropNext = true;
      }
      const fault = faults.shift();
      if (fault) {
        answerWithFault(fault, {
          peers,
          peer,
          request: pdu,
          fields: { message_id: messageId },
          slowResponseMs: context.slowResponseMs,
        });
        emit({ type: "fault", fault, sessionId: peer.id, messageId });
      } else {
        peers.reply(peer, pdu, { message_id: messageId });
      }
      emit({ type: "submit", submit });
      if (wanted) dispatcher.schedule({ submit, ...fate, attempts: 0 }, receiptDelayMs);
    },

    /** The message's state now: ENROUTE until its receipt is due, then the final one. */
    query(peer, pdu) {
      const fate = fates.get(pdu.message_id ?? "");
      if (!canSubmit(peer)) {
        return peers.reply(peer, pdu, { command_status: smpp.ESME_RINVBNDSTS });
      }
      if (!fate) return peers.reply(peer, pdu, { command_status: smpp.ESME_RQUERYFAIL });
      const final = fate.doneAt <= Date.now();
      peers.reply(peer, pdu, {
        message_id: pdu.message_id,
        final_date: final ? new Date(fate.doneAt) : "",
        message_state: final ? messageStates[fate.stat] : smpp.MESSAGE_STATE.ENROUTE,
        error_code: final ? fate.err & 0xff : 0,
      });
    },

    lost() {
      lostInDrop++;
    },
    dropsThis() {
      if (!dropNext) return false;
      dropNext = false;
      breakAfter()();
      lostInDrop = 1;
      return true;
    },
    dropAfter(n) {
      if (!Number.isInteger(n) || n < 1) throw new RangeError("dropAfterSubmits: n must be ≥ 1");
      dropCountdown = n;
    },
    faultNext(fault, count) {
      if (!Number.isInteger(count) || count < 1) {
        throw new RangeError("faultSubmits: count must be ≥ 1");
      }
      for (let i = 0; i < count; i++) faults.push(fault);
    },
    setMaxPerSecond(limit) {
      maxPerSecond = limit;
    },
    peakPerSecond: () => peakInWindow(acceptedAt, 1000),
  };
}
