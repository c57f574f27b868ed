import { randomUUID } from "node:crypto";
import type { Logger } from "@switchboard/kit";
import smpp from "smpp";
import {
  CarrierError,
  type CarrierEvents,
  type MessagingCarrier,
  type SubmitRequest,
  type SubmitResult,
} from "../carrier.js";
import { BindLostError, SmppBind } from "./bind.js";
import { isThrottling, submitRefused } from "./command-status.js";
import { readInbound } from "./inbound-pdu.js";
import { readReceipt } from "./receipt.js";
import { encodeShortMessages } from "./short-message.js";
import type { SmppConfig } from "./smpp-settings.js";
import { SubmitRate } from "./submit-rate.js";

/** ESME_RINVDSTADR: an MO message to a number that is not the platform's. */
const invalidDestination = 0x0b;

/** esm_class bits 2–5: 0x04 marks an SMSC delivery receipt (SMPP 3.4 §5.2.12). */
const isReceipt = (esmClass: number) => (esmClass & 0x3c) === 0x04;

/** SMPP addresses travel without the '+' of E.164, with TON international (1), NPI ISDN (1). */
const address = (e164: string) => ({ ton: 1, npi: 1, addr: e164.replace(/^\+/, "") });

export interface SmppCarrierOptions {
  config: SmppConfig;
  logger: Logger;
  /** Shared by the replicas' submit rate; undefined in embedded mode. */
  redis?: { url: string; prefix: string } | undefined;
  /** How long a receipt is retried while its message is not yet recorded as sent. */
  receiptPatienceMs?: number;
  /** Longest a submit keeps trying its parts (rebinds, throttling) before giving up. */
  submitDeadlineMs: number;
}

/**
 * The `smpp` messaging carrier (docs/api.md "Carriers"): an ESME bound as transceiver to the
 * SMSC. Each segment is one submit_sm (registered_delivery 1), at SMPP_THROUGHPUT shared by the
 * replicas. A part is sent again only when the SMSC cannot hold it: on the next bind when it
 * never left (the bind was down), after a pause when the SMSC refused it busy (throttled). A
 * part that left without an answer (response timeout, lost bind, an unreadable PDU) has an
 * unknown outcome: the submit fails `unknown` and the pipeline, not this adapter, decides
 * (SMPP cannot recognise a repeat, so the message fails `outcome-unknown`). Receipts and MO
 * messages are answered only once their effect is committed.
 */
export class SmppCarrier implements MessagingCarrier {
  readonly name = "smpp";
  readonly idempotentSubmit = false;
  readonly channels = ["sms"] as const;
  readonly sandbox = false;
  private readonly bind: SmppBind;
  private readonly rate: SubmitRate;
  private events: CarrierEvents | undefined;
  private reference = Math.floor(Math.random() * 256);
  private stopping = false;

  constructor(private readonly options: SmppCarrierOptions) {
    const { config, logger } = options;
    this.bind = new SmppBind(config, logger, (pdu) => this.delivered(pdu));
    this.rate = new SubmitRate({
      perSecond: config.throughput,
      key: `${config.host}:${config.port}:${config.systemId}`,
      redis: options.redis,
    });
  }

  get bound(): boolean {
    return this.bind.isBound;
  }

  async start(events: CarrierEvents): Promise<void> {
    this.events = events;
    this.bind.start();
  }

  async rcsCapable(): Promise<boolean> {
    return false;
  }

  async submit(request: SubmitRequest): Promise<SubmitResult> {
    this.reference = (this.reference + 1) % 256;
    const { dataCoding, esmClass, parts } = encodeShortMessages(request.body, this.reference);
    const source = address(request.from);
    const destination = address(request.to);
    const deadline = Date.now() + this.options.submitDeadlineMs;
    const ids: string[] = [];
    for (const part of parts) {
      ids.push(
        await this.submitPart(
          {
            source_addr_ton: source.ton,
            source_addr_npi: source.npi,
            source_addr: source.addr,
            dest_addr_ton: destination.ton,
            dest_addr_npi: destination.npi,
            destination_addr: destination.addr,
            esm_class: esmClass,
            registered_delivery: 1,
            data_coding: dataCoding,
            short_message: part,
            ...(request.expiresAt ? { validity_period: request.expiresAt } : {}),
          },
          deadline,
          ids.length > 0,
        ),
      );
    }
    const [providerMessageId, ...partIds] = ids;
    if (providerMessageId === undefined) throw new Error("a message has at least one part");
    return { providerMessageId, ...(partIds.length > 0 ? { partIds } : {}) };
  }

  /**
   * One part, until the SMSC answers it: again on the next bind when it never left, after a
   * pause when throttled. `partOfSent`: earlier parts went, so giving up leaves the outcome
   * unknown.
   */
  private async submitPart(
    fields: smpp.PDUFields,
    deadline: number,
    partOfSent: boolean,
  ): Promise<string> {
    let pauseMs = 250;
    for (;;) {
      if (Date.now() > deadline) {
        throw new CarrierError(
          "smpp-unavailable",
          "the SMSC did not take the message in time",
          "transient",
          partOfSent ? "unknown" : "not_sent",
        );
      }
      let response: smpp.PDU;
      try {
        await this.rate.take();
        response = await this.bind.request("submit_sm", fields, deadline);
      } catch (error) {
        if (error instanceof BindLostError && error.sent) {
          throw new CarrierError(
            "smpp-no-response",
            `the SMSC may have taken the part: ${error.message}`,
            "transient",
            "unknown",
          );
        }
        // Stopping: the part is given back (the queue retries it on a replica that runs on).
        if (this.stopping || (error instanceof BindLostError && error.final)) {
          throw new CarrierError(
            "smpp-stopped",
            "the carrier stopped before the SMSC answered",
            "transient",
            partOfSent ? "unknown" : "not_sent",
          );
        }
        if (error instanceof BindLostError) continue;
        throw error;
      }
      const status = response.command_status;
      if (status === 0) {
        // Taken even without an id (a faulty SMSC): sending it again would send it twice.
        return typeof response.message_id === "string" && response.message_id !== ""
          ? response.message_id
          : `smpp-no-id-${randomUUID()}`;
      }
      const refused = submitRefused(status);
      // Throttling slows this part down; another transient refusal of a first part goes back to
      // the pipeline's retry, of a later part is retried here (its message is half sent).
      if (refused.kind === "permanent" || (!partOfSent && !isThrottling(status))) throw refused;
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
      pauseMs = Math.min(pauseMs * 2, 5_000);
    }
  }

  /** A deliver_sm: a receipt, or an MO message (or part of one). Resolves with the answer. */
  private async delivered(pdu: smpp.PDU): Promise<number> {
    const events = this.events;
    if (!events) return smpp.ESME_RX_T_APPN;
    const inbound = readInbound(pdu);
    if (isReceipt(Number(pdu.esm_class ?? 0))) {
      const receipt = readReceipt({
        receipted_message_id: pdu.receipted_message_id,
        message_state: pdu.message_state,
        text: inbound.text,
      });
      if (!receipt?.status) return 0;
      await this.applyPatiently(events, {
        providerMessageId: receipt.messageId,
        status: receipt.status,
        occurredAt: new Date(),
        ...(receipt.status !== "delivered"
          ? { errorCode: `smpp-${receipt.stat.toLowerCase()}` }
          : {}),
      });
      return 0;
    }
    const outcome = await events.inbound(inbound);
    return outcome === "unknown-number" ? invalidDestination : 0;
  }

  /**
   * A receipt may overtake the commit of its message's `sent` (the SMSC answers the submit and
   * sends the receipt at once): it is tried again for a while before the SMSC is told to retry
   * later (ESME_RX_T_APPN, by the caller), so no receipt is lost to the race.
   */
  private async applyPatiently(
    events: CarrierEvents,
    receipt: Parameters<CarrierEvents["receipt"]>[0],
  ): Promise<void> {
    const giveUpAt = Date.now() + (this.options.receiptPatienceMs ?? 30_000);
    let pauseMs = 50;
    for (;;) {
      try {
        await events.receipt(receipt);
        return;
      } catch (error) {
        if (Date.now() + pauseMs > giveUpAt) throw error;
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        pauseMs = Math.min(pauseMs * 2, 2_000);
      }
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.bind.stop();
    await this.rate.close();
  }
}
