import type { Hangup } from "./states.js";
import type { ActionKind } from "../scheduler/action-runner.js";
import type { Tx } from "../scheduler/tx.js";

/**
 * The voice carrier behind call-control. Shaped after a SIP trunk: `dial` is the INVITE (with
 * the STIR/SHAKEN PASSporT in the `Identity` header, RFC 8224), `answer` the 200 OK to an
 * inbound INVITE, `hangup` a BYE (after answer), CANCEL (before) or final response (a ringing
 * inbound call). The network reports progress back through CarrierEvents: 180 → `ringing`,
 * 200 → `answered`, BYE or a final failure response → `ended`.
 *
 * Commands run inside the transaction that records the state change they belong to, and may
 * be repeated after a crash: an adapter must treat the call id as the dialog key (SIP Call-ID)
 * and make each command idempotent. An adapter that sends packets should enqueue them in that
 * transaction (e.g. as a durable timer due now) rather than send before commit.
 */
export interface DialRequest {
  callId: string;
  accountId: string;
  /** The call's seat (whose phone places it over SIP), if it has one. */
  seatId: string | null;
  to: string;
  from: string;
  /** The PASSporT (compact JWS): `Identity: <identity>;info=<identityInfo>;alg=ES256;ppt=shaken`. */
  identity: string;
  /** The certificate URL (`x5u`). */
  identityInfo: string;
  timeoutSeconds: number;
}

/** What a folded dial knows before the call is read: the rest is in `s`. */
export interface FoldedDial {
  callId: string;
  to: string;
  identityInfo: string;
}

export interface InboundAnswer {
  callId: string;
  accountId: string;
}

export interface HangupRequest {
  callId: string;
  direction: "outbound" | "inbound";
  hangup: Hangup;
}

export type CarrierEvent =
  | { type: "ringing"; callId: string; at: Date }
  | { type: "answered"; callId: string; at: Date }
  /** The far end's early media (a 183's SDP) reached the other side before the answer. */
  | { type: "early_media"; callId: string }
  | {
      type: "ended";
      callId: string;
      at: Date;
      hangup: Hangup;
      /**
       * The network never connected the call although the account answered it (an inbound
       * call whose seat's phone could not take it): it ends in its cause's unanswered status.
       */
      unanswered?: boolean;
    };

/** The call engine's side of the adapter: where the network's progress lands. */
export interface CarrierEvents {
  onCarrierEvent(tx: Tx, event: CarrierEvent): Promise<void>;
  /**
   * The same, sent with the transaction's COMMIT as one statement per event (no round trip of
   * its own; the caller learns nothing of whether it applied): for an adapter that reads nothing
   * back in that transaction, such as the sandbox network's timers.
   */
  foldCarrierEvent(tx: Tx, event: CarrierEvent): void;
  /** A transaction for what the network reports outside any timer (its timers wake after). */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /** The same for work whose writes are one statement: no BEGIN, no COMMIT, one round trip. */
  oneStatement<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
}

/** Durable timers an adapter may use (the sandbox network's script lives in them). */
export interface CarrierTimers {
  register(kind: string, handler: ActionKind): void;
}

export interface CarrierAdapter {
  readonly name: string;
  /** The deterministic simulated network: the sandbox-only endpoints exist only with it. */
  readonly simulated: boolean;
  /** Connects the adapter to the engine (called once, before any command). */
  attach(events: CarrierEvents, timers: CarrierTimers): void;
  dial(tx: Tx, request: DialRequest): Promise<void>;
  /**
   * The dial as common table expressions (`name AS (…)`) of the statement that marks the call
   * initiated, reading the call from its updated row `s` (call_control.calls' columns), so the
   * dial timer's whole transaction is one round trip (calls/folded-steps.ts); `param` adds a
   * value to that statement, and a timer it sets that falls due at once is noted on `tx`
   * (`wakeAt`). For an adapter whose dial is only rows of this database: the sandbox's network
   * script, the sip carrier's timer that INVITEs the seat's phone.
   */
  foldDial?(tx: Tx, request: FoldedDial, param: (value: unknown) => string): string[];
  answer(tx: Tx, request: InboundAnswer): Promise<void>;
  hangup(tx: Tx, request: HangupRequest): Promise<void>;
  /**
   * At start, before the timers run: ends what a previous life of this process left on the
   * network that nothing will continue (the number of calls it ended or closed).
   */
  recover(): Promise<number>;
  stop(): Promise<void>;
}
