import { randomUUID } from "node:crypto";
import type { BatchedWork, Logger, Pool } from "@switchboard/kit";
import { channels } from "../validation.js";
import {
  CarrierError,
  type CarrierEvents,
  type MessagingCarrier,
  type SubmitRequest,
  type SubmitResult,
} from "./carrier.js";
import { sandboxBehaviour } from "./sandbox-outcomes.js";
import { createSandboxReceipts, firstReceipt, type SandboxReceipts } from "./sandbox-receipts.js";

/**
 * The deterministic sandbox network (see sandbox-outcomes.ts). What it accepted is kept in
 * `messaging.sandbox_network`, keyed by the client reference: a repeated submit of one message
 * is answered with the first provider id and never sent again (`submit_calls` counts the
 * submits; the row itself is the one send). Each message's receipt comes back
 * `receiptDelayMs` after the network took it, scheduled in the row by the statement that took
 * it and sent by the rows' receipt runner (sandbox-receipts.ts), and RCS messages that are
 * delivered are read one delay later.
 */
export class SandboxCarrier implements MessagingCarrier {
  readonly name = "sandbox";
  readonly idempotentSubmit = true;
  readonly channels = channels;
  readonly sandbox = true;
  private readonly receipts: SandboxReceipts;

  constructor(
    private readonly options: {
      /** Where the network's writes commit: shared with the delivery's (MessagingContext). */
      groupCommit: <R>(work: BatchedWork<R>) => Promise<R>;
      /** The receipt runner's connections. */
      pool: Pool;
      logger: Logger;
      receiptDelayMs: number;
      /** Receipts applied at once. */
      concurrency: number;
    },
  ) {
    this.receipts = createSandboxReceipts({
      pool: options.pool,
      logger: options.logger,
      delayMs: options.receiptDelayMs,
      concurrency: options.concurrency,
    });
  }

  async start(events: CarrierEvents): Promise<void> {
    this.receipts.start(events);
  }

  async rcsCapable(to: string): Promise<boolean> {
    return sandboxBehaviour(to) !== "not-rcs-capable";
  }

  async submit(request: SubmitRequest): Promise<SubmitResult> {
    const behaviour = sandboxBehaviour(request.to);
    if (behaviour === "rejected") {
      throw new CarrierError(
        "destination-rejected",
        "the network refused the destination",
        "permanent",
      );
    }
    if (behaviour === "congested") {
      throw new CarrierError(
        "network-congested",
        "the network is congested; try later",
        "transient",
      );
    }
    if (behaviour === "throttled-once" && request.attempt === 1) {
      throw new CarrierError(
        "throttled",
        "the network throttled the submit; try later",
        "transient",
      );
    }
    const { rows } = await this.options.groupCommit((client) =>
      client.query<{ provider_message_id: string; submit_calls: number }>(
        `INSERT INTO messaging.sandbox_network AS n
         (client_ref, provider_message_id, channel, to_number, from_number, segments,
          receipt_status, receipt_due_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8 / 1000.0))
       ON CONFLICT (client_ref) DO UPDATE
         SET submit_calls = n.submit_calls + 1, receipt_status = excluded.receipt_status,
             receipt_due_at = excluded.receipt_due_at, receipt_tries = 0
       RETURNING n.provider_message_id, n.submit_calls`,
        [
          request.clientRef,
          `sbx-${randomUUID()}`,
          request.channel,
          request.to,
          request.from,
          request.segments,
          firstReceipt(request.to),
          this.options.receiptDelayMs,
        ],
      ),
    );
    const row = rows[0];
    if (!row)
      throw new CarrierError(
        "network-error",
        "the sandbox network did not answer",
        "transient",
        "unknown",
      );
    const providerMessageId = row.provider_message_id;
    // A repeated submit scheduled the receipt again: that heals a receipt that ran out of
    // tries before the message was recorded as sent.
    this.receipts.wake(Date.now() + this.options.receiptDelayMs);
    if (behaviour === "answer-lost-once" && row.submit_calls === 1) {
      throw new CarrierError(
        "network-timeout",
        "the network did not answer in time",
        "transient",
        "unknown",
      );
    }
    return { providerMessageId };
  }

  /** Sends the receipt of a message again (the sweeper asks when one is overdue). */
  async requestReceipt(message: { providerMessageId: string; to: string }): Promise<void> {
    await this.options.pool.query(
      `UPDATE messaging.sandbox_network
          SET receipt_status = $2, receipt_due_at = now() + make_interval(secs => $3 / 1000.0),
              receipt_tries = 0
        WHERE provider_message_id = $1`,
      [message.providerMessageId, firstReceipt(message.to), this.options.receiptDelayMs],
    );
    this.receipts.wake(Date.now() + this.options.receiptDelayMs);
  }

  async stop(): Promise<void> {
    await this.receipts.stop();
  }
}
