import type { wire } from "@switchboard/proto";
import type { Encoding } from "../encoding/segments.js";
import { Channel } from "../validation.js";

/**
 * The messaging carrier adapter: what the delivery pipeline needs from a network. The sandbox
 * implements it here; the shapes are chosen so that real adapters fit without changes above:
 *
 * - SMPP 3.4/5.0: `submit` → one `submit_sm` per segment (data_coding 0 for GSM-7, 8 for UCS-2,
 *   concatenation UDH, registered_delivery = 1, validity_period from `expiresAt`); the first
 *   `submit_sm_resp` message_id is the provider id. `deliver_sm` with a delivery receipt →
 *   `events.receipt`; other `deliver_sm` → `events.inbound`. SMPP has no client reference, so
 *   `idempotentSubmit` is false: after a submit whose outcome is unknown (timeout, lost bind)
 *   the pipeline fails the message instead of risking a second send.
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
}

export type ReceiptStatus = Extract<
  wire.MessageStatusValue,
  "delivered" | "undelivered" | "failed" | "read"
>;

export interface DeliveryReceipt {
  providerMessageId: string;
  status: ReceiptStatus;
  errorCode?: string;
  occurredAt: Date;
}

export interface CarrierEvents {
  /** A delivery (or read) receipt. Rejects when it cannot be applied yet; the adapter retries. */
  receipt(receipt: DeliveryReceipt): Promise<void>;
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
