import smpp, { type PDUFields } from "smpp";
import { encodeGsm } from "./alphabet.js";
import { messageStates, type Stat } from "./outcomes.js";
import type { ReceiptAttempt, SubmitRecord } from "./records.js";

/**
 * How a receipt carries its result: `text` in short_message only (`id:... stat:...`), `tlv`
 * only as receipted_message_id / message_state (and network_error_code on failure) with an
 * empty short_message, or `both` as most SMPP 3.4 SMSCs send it.
 */
export type ReceiptFormat = "text" | "tlv" | "both";

/** A receipt owed to the ESME for one accepted submit. */
export interface Receipt {
  submit: SubmitRecord;
  stat: Stat;
  err: number;
  doneAt: number;
  /** Sends so far. */
  attempts: number;
}

const two = (value: number) => String(value).padStart(2, "0");

/** `YYMMDDhhmm` in UTC, the receipt's submit/done date. */
export function receiptDate(ms: number): string {
  const d = new Date(ms);
  return (
    two(d.getUTCFullYear() % 100) +
    two(d.getUTCMonth() + 1) +
    two(d.getUTCDate()) +
    two(d.getUTCHours()) +
    two(d.getUTCMinutes())
  );
}

/**
 * The receipt text in the de facto format of SMPP 3.4 appendix B, one message per receipt
 * (`sub:001`), `dlvrd:001` only when delivered, and the first 20 characters of the text.
 */
export function receiptText(receipt: Omit<Receipt, "attempts">): string {
  const { submit, stat, err } = receipt;
  return (
    `id:${submit.messageId} sub:001 dlvrd:${stat === "DELIVRD" ? "001" : "000"} ` +
    `submit date:${receiptDate(submit.at)} done date:${receiptDate(receipt.doneAt)} ` +
    `stat:${stat} err:${String(err).padStart(3, "0")} text:${[...submit.text].slice(0, 20).join("")}`
  );
}

/**
 * The receipt's deliver_sm: from the handset the submit went to, to the submit's source (TON
 * and NPI as the ESME sent them), esm_class "SMSC delivery receipt", GSM 03.38 text (a quoted
 * character outside it becomes "?").
 */
export function receiptFields(
  receipt: Omit<Receipt, "attempts">,
  format: ReceiptFormat,
): PDUFields {
  const { submit, stat, err } = receipt;
  const tlvs: PDUFields =
    format === "text"
      ? {}
      : {
          receipted_message_id: submit.messageId,
          message_state: messageStates[stat],
          // Network type 3 (GSM) and the error code, for failures only.
          ...(err !== 0 && { network_error_code: Buffer.from([3, err >> 8, err & 0xff]) }),
        };
  return {
    source_addr_ton: submit.destinationTon,
    source_addr_npi: submit.destinationNpi,
    source_addr: submit.destination,
    dest_addr_ton: submit.sourceTon,
    dest_addr_npi: submit.sourceNpi,
    destination_addr: submit.source,
    esm_class: smpp.ESM_CLASS.MC_DELIVERY_RECEIPT,
    data_coding: 0,
    short_message: format === "tlv" ? Buffer.alloc(0) : encodeGsm(receiptText(receipt), "?"),
    ...tlvs,
  };
}

/** What the dispatcher needs from the SMSC's sessions. */
export interface ReceiptLink {
  /** A live session bound to receive for `systemId`, or undefined when there is none. */
  pick(systemId: string): number | undefined;
  /**
   * Sends a deliver_sm on session `sessionId`; its sequence_number, or undefined when the
   * session could not take it. `onStatus` gets the response's command_status.
   */
  send(
    sessionId: number,
    fields: PDUFields,
    onStatus: (status: number) => void,
  ): number | undefined;
  /** Each attempt when sent (`pending`) and again when it settles. */
  attempt(attempt: ReceiptAttempt, settled: boolean): void;
}

export interface ReceiptTiming {
  /** An unanswered receipt counts as failed after this long (ms). */
  responseTimeoutMs: number;
  /** A refused or unanswered receipt is sent again this long after (ms). */
  retryMs: number;
}

/**
 * Holds receipts for the ESME like a real SMSC: each goes to any live receiving session of its
 * system id; with none bound it waits for a bind; refused (e.g. ESME_RX_T_APPN), unanswered or
 * lost with its session, it is sent again, as a new attempt, until a session answers 0.
 */
export class ReceiptDispatcher {
  private readonly waiting: Receipt[] = [];
  private readonly inFlight = new Map<
    ReceiptAttempt,
    { receipt: Receipt; timer: NodeJS.Timeout }
  >();
  private readonly timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly link: ReceiptLink,
    private readonly format: ReceiptFormat,
    private readonly timing: ReceiptTiming,
  ) {}

  /** Owes `receipt`, due `delayMs` from now. */
  schedule(receipt: Receipt, delayMs: number): void {
    this.later(delayMs, () => this.enqueue(receipt));
  }

  /** Receipts waiting for a receiving session (not those sent and not yet answered). */
  get held(): number {
    return this.waiting.length;
  }

  /** Sends what is waiting, if a session can take it (called after every bind). */
  pump(): void {
    const still: Receipt[] = [];
    for (const receipt of this.waiting.splice(0)) {
      if (!this.sendOne(receipt)) still.push(receipt);
    }
    this.waiting.push(...still);
  }

  /** The session closed: what it had not answered is lost, and owed again at once. */
  sessionClosed(sessionId: number): void {
    const lost = [...this.inFlight].filter(([attempt]) => attempt.sessionId === sessionId);
    for (const [attempt, { receipt }] of lost) {
      this.settle(attempt, "lost");
      this.enqueue(receipt);
    }
  }

  stop(): void {
    for (const timer of this.timers) clearTimeout(timer);
    for (const { timer } of this.inFlight.values()) clearTimeout(timer);
    this.timers.clear();
    this.inFlight.clear();
    this.waiting.length = 0;
  }

  private enqueue(receipt: Receipt): void {
    this.waiting.push(receipt);
    this.pump();
  }

  private sendOne(receipt: Receipt): boolean {
    const sessionId = this.link.pick(receipt.submit.systemId);
    if (sessionId === undefined) return false;
    const attempt: ReceiptAttempt = {
      messageId: receipt.submit.messageId,
      stat: receipt.stat,
      attempt: receipt.attempts + 1,
      sessionId,
      sequence: 0,
      sentAt: Date.now(),
      result: "pending",
    };
    const sequence = this.link.send(sessionId, receiptFields(receipt, this.format), (status) =>
      this.answered(attempt, status),
    );
    if (sequence === undefined) return false;
    receipt.attempts++;
    attempt.sequence = sequence;
    const timer = setTimeout(() => {
      this.settle(attempt, "timeout");
      this.later(this.timing.retryMs, () => this.enqueue(receipt));
    }, this.timing.responseTimeoutMs);
    this.inFlight.set(attempt, { receipt, timer });
    this.link.attempt(attempt, false);
    return true;
  }

  private answered(attempt: ReceiptAttempt, status: number): void {
    const entry = this.inFlight.get(attempt);
    if (!entry) return; // answered after it timed out or its session was given up
    attempt.status = status;
    attempt.answeredAt = Date.now();
    this.settle(attempt, status === 0 ? "ok" : "refused");
    if (status !== 0) this.later(this.timing.retryMs, () => this.enqueue(entry.receipt));
  }

  private settle(attempt: ReceiptAttempt, result: ReceiptAttempt["result"]): void {
    const entry = this.inFlight.get(attempt);
    if (entry) clearTimeout(entry.timer);
    this.inFlight.delete(attempt);
    attempt.result = result;
    this.link.attempt(attempt, true);
  }

  private later(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, ms);
    this.timers.add(timer);
  }
}
