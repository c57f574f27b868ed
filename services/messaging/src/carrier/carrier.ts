import type { wire } from "@switchboard/proto";
import type { Encoding } from "../encoding/segments.js";
import { Channel } from "../validation.js";

/**
 * The messaging carrier adapter: what the delivery pipeline needs from a network. The sandbox
 * implements it here; the shapes are chosen so that real adapters fit without changes above:
 *
 * - SMPP 3.4 (smpp/smpp-carrier.ts): `submit` → one `submit_sm` per segment; the first
 *   `submit_sm_resp` message_id is the provider id, the others `partIds`. `deliver_sm` with a
 *   delivery receipt → `events.receipt`; other `deliver_sm` → `events.inbound`. SMPP has no
 *   client reference, so `idempotentSubmit` is false: a try whose outcome is unknown (no
 *   response came to a part that left, or the process did not live to finish) fails the
 *   message rather than risk a second send. The adapter itself resubmits a part only when the
 *   SMSC cannot hold it: it never left (on the next bind), or it was refused as busy.
 * - RCS Business Messaging: `submit` → `agentMessages.create` with `messageId = clientRef`
 *   (the platform refuses a repeated id: 409 ALREADY_EXISTS counts as accepted), so
 *   `idempotentSubmit` is true; `rcsCapable` → the capability check (404 = not capable);
 *   DELIVERED / READ webhook events → `events.receipt`; user messages → `events.inbound`.
 */
export interface MessagingCarrier {
  readonly name: string;
  /** The network dedupes submits by `clientRef`, so a retry after an unknown outcome is safe. */
  readonly idempotentSubmit: boolean;
  readonly channels: readonly Channel[];
  /** The sandbox answers the sandbox-only endpoints; real networks never do. */
  readonly sandbox: boolean;
  /** Binds the adapter to the pipeline (receipts, inbound) and opens its connections. */
  start(events: CarrierEvents): Promise<void>;
  /** Whether the recipient can receive RCS now. */
  rcsCapable(to: string): Promise<boolean>;
  /** Hands one message to the network; throws CarrierError when it did not (or may not) take it. */
  submit(request: SubmitRequest): Promise<SubmitResult>;
  /**
   * Asks the network again for a message's receipt when none came (SMPP: `query_sm`; RBM: the
   * message's status). Optional: without it an overdue message stays `sent`.
   */
  requestReceipt?(message: {
    providerMessageId: string;
    to: string;
    channel: string;
  }): Promise<void>;
  stop(): Promise<void>;
}

export interface SubmitRequest {
  /** Our reference (the message id): the same on every try of one message. */
  clientRef: string;
  /** 1-based try of this message. */
  attempt: number;
  channel: Channel;
  from: string;
  to: string;
  body: string;
  mediaUrls: string[];
  encoding: Encoding;
  segments: number;
  /** Past this the network should drop the message (SMPP validity_period, RBM expireTime). */
  expiresAt: Date | null;
}

export interface SubmitResult {
  /** The network's id of the message; receipts name it. */
  providerMessageId: string;
  /** The network's ids of the message's other parts, where each part has its own (SMPP). */
  partIds?: string[];
}

export type ReceiptStatus = Extract<
  wire.MessageStatusValue,
  "delivered" | "undelivered" | "failed" | "expired" | "read"
>;

export interface DeliveryReceipt {
  providerMessageId: string;
  status: ReceiptStatus;
  errorCode?: string;
  occurredAt: Date;
}

/** A mobile-originated message, or one part of a concatenated one, as the network hands it over. */
export interface InboundPart {
  from: string;
  /** One of the platform's numbers (E.164). */
  to: string;
  text: string;
  /** Which part this is of a concatenated message (UDH or SAR), by the sender's reference. */
  concat?: { reference: number; total: number; sequence: number };
}

/** What became of an inbound part: stored (whole or awaiting its other parts), or refused. */
export type InboundOutcome = "received" | "part-stored" | "unknown-number";

export interface CarrierEvents {
  /** A delivery (or read) receipt. Rejects when it cannot be applied yet; the adapter retries. */
  receipt(receipt: DeliveryReceipt): Promise<void>;
  /** A network-delivered inbound message; resolves once its effect is committed. */
  inbound(part: InboundPart): Promise<InboundOutcome>;
}

/**
 * Why a submit did not succeed. `permanent`: the network refused the message, a retry would be
 * refused too. `transient`: try again later. `outcome` says whether the network may have taken
 * the message anyway (`unknown`: e.g. a timeout after sending the request).
 */
export class CarrierError extends Error {
  override readonly name = "CarrierError";
  constructor(
    readonly code: string,
    message: string,
    readonly kind: "permanent" | "transient",
    readonly outcome: "not_sent" | "unknown" = "not_sent",
  ) {
    super(message);
  }
}
