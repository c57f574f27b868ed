import type { SubmitFault } from "./faults.js";
import type { MoRequest } from "./mo.js";
import type { OutcomeFunction } from "./outcomes.js";
import type { ReceiptFormat } from "./receipts.js";
import type {
  BindRecord,
  PduRecord,
  ReceiptAttempt,
  RefusedSubmit,
  SubmitRecord,
} from "./records.js";

export interface TestSmscOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: an ephemeral port, read it from `port` on the result. */
  port?: number;
  /** The one account the SMSC accepts binds for. */
  systemId: string;
  password: string;
  /** From accepting a submit to its receipt (ms, default 50). */
  receiptDelayMs?: number;
  /** Decides each submit's fate; default `defaultOutcome` (by the destination's last digit). */
  outcome?: OutcomeFunction;
  /** Default `both`: the text and the TLVs. */
  receiptFormat?: ReceiptFormat;
  /**
   * Accepted submits allowed in any sliding 1 s window, across all sessions; past it a submit
   * gets ESME_RTHROTTLED. Default: no limit.
   */
  maxPerSecond?: number;
  /** How long each submit_sm waits for its answer (ms, default 0): lets an ESME's window fill. */
  submitDelayMs?: number;
  /** How late the `slow-response` fault answers (ms, default 5000). */
  slowResponseMs?: number;
  /** A receipt (or MO deliver_sm) unanswered this long counts as failed (ms, default 3000). */
  responseTimeoutMs?: number;
  /** A refused or unanswered receipt is sent again after this long (ms, default 500). */
  receiptRetryMs?: number;
  /** Called for what the CLI logs; no event holds the password. */
  onEvent?: (event: SmscEvent) => void;
}

/** What happened, as it happened: one per session, bind, submit, receipt attempt, MO, drop. */
export type SmscEvent =
  | { type: "session"; sessionId: number; state: "open" | "closed"; remote: string }
  | { type: "bind"; bind: BindRecord }
  | { type: "unbind"; sessionId: number }
  | { type: "submit"; submit: SubmitRecord }
  | { type: "refused"; submit: RefusedSubmit }
  /** A receipt attempt once it settled (answered, timed out or lost). */
  | { type: "receipt"; attempt: ReceiptAttempt }
  | { type: "mo"; sessionId: number; request: MoRequest; statuses: number[] }
  /** dropAfterSubmits broke the connections; `lost` submits arrived in between, unanswered. */
  | { type: "drop"; sessions: number; lost: number }
  /** faultSubmits: an accepted submit met `fault` instead of its answer. */
  | { type: "fault"; fault: SubmitFault; sessionId: number; messageId: string };

export interface MoResult {
  /** The deliver_sm_resp command_status of each deliver_sm, in the order they were sent. */
  statuses: number[];
  sessionId: number;
}

export interface TestSmsc {
  readonly host: string;
  readonly port: number;
  /** Every PDU in and out, in order. */
  readonly pdus: readonly PduRecord[];
  /** Accepted submits (answered ESME_ROK with a message_id). */
  readonly submits: readonly SubmitRecord[];
  /** Submits answered ESME_RTHROTTLED, by the rate limit or by the outcome. */
  readonly throttled: readonly RefusedSubmit[];
  /** Submits answered with any other error status. */
  readonly refused: readonly RefusedSubmit[];
  /** Every send of a delivery receipt, updated with its result once known. */
  readonly receipts: readonly ReceiptAttempt[];
  readonly binds: readonly BindRecord[];
  /** How many submits were accepted. */
  accepted(): number;
  /** The most submits accepted in any sliding 1-second window so far. */
  submitsPerSecond(): number;
  /** Sessions bound now (any bind type). */
  bound(): number;
  /** Receipts due but held because no receiving session is bound. */
  heldReceipts(): number;
  /**
   * Resolves with the first truthy value `predicate` returns, polling every 10 ms; rejects
   * after `timeoutMs` (default 5000).
   */
  waitFor<T>(
    predicate: (smsc: TestSmsc) => T | undefined | null | false,
    timeoutMs?: number,
  ): Promise<T>;
  /**
   * Delivers a mobile-originated message to a session bound to receive (waiting up to
   * responseTimeoutMs for one), part after part, each once the previous one was answered.
   * Rejects when an answer does not come in time or the session closes.
   */
  sendMo(request: MoRequest): Promise<MoResult>;
  /** Destroys every session's socket at once; resolves when all are closed. */
  dropConnections(): Promise<void>;
  /**
   * After `n` more accepted submits, the next submit to arrive is lost in flight and every
   * connection closes after the answers already written (which arrive): the lost submit and
   * what arrives meanwhile go unanswered and unrecorded (but for `pdus`, where they are marked
   * `dropped`), like PDUs in flight on a broken connection.
   */
  dropAfterSubmits(n: number): void;
  /**
   * The next `count` (default 1) accepted submits meet `fault` (see SubmitFault): each is
   * recorded in `submits` as accepted, and answered late, never or with bytes that are not a
   * PDU; `pdus` holds an "out" record named after the fault with the submit's sequence.
   */
  faultSubmits(fault: SubmitFault, count?: number): void;
  /** While on, every bind is refused with ESME_RBINDFAIL. */
  refuseBinds(on: boolean): void;
  /** Changes (or with undefined lifts) the rate limit of `maxPerSecond`. */
  setMaxPerSecond(limit: number | undefined): void;
  /**
   * Closes the listener and every session: destroyed at once, or with `unbind`, each bound one
   * sent an unbind first (waiting up to a second for the answers).
   */
  stop(options?: { unbind?: boolean }): Promise<void>;
}
