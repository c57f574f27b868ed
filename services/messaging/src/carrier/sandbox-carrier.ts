import { randomUUID } from "node:crypto";
import type { BatchedWork, EventBus, Logger, QueueWorker } from "@switchboard/kit";
import { channels } from "../validation.js";
import {
  CarrierError,
  type CarrierEvents,
  type MessagingCarrier,
  type ReceiptStatus,
  type SubmitRequest,
  type SubmitResult,
} from "./carrier.js";
import { sandboxBehaviour } from "./sandbox-outcomes.js";

/** The queue on which the simulated network sends its receipts back, after a delay. */
export const SANDBOX_NETWORK_QUEUE = "messaging.sandbox-network";

interface ReceiptJob {
  providerMessageId: string;
  status: ReceiptStatus;
  channel: string;
  errorCode?: string;
  /** Which scheduling of the receipt this is (part of the job id). */
  variant?: string;
}

/**
 * The deterministic sandbox network (see sandbox-outcomes.ts). What it accepted is kept in
 * `messaging.sandbox_network`, keyed by the client reference: a repeated submit of one message
 * is answered with the first provider id and never sent again (`submit_calls` counts the
 * submits; the row itself is the one send). Receipts come back as delayed jobs on the
 * bus after `receiptDelayMs` (durable with BullMQ), and RCS messages that are delivered are
 * read one delay later.
 */
export class SandboxCarrier implements MessagingCarrier {
  readonly name = "sandbox";
  readonly idempotentSubmit = true;
  readonly channels = channels;
  readonly sandbox = true;
  private worker: QueueWorker | undefined;

  constructor(
    private readonly options: {
      /** Where the network's writes commit: shared with the delivery's (MessagingContext). */
      groupCommit: <R>(work: BatchedWork<R>) => Promise<R>;
      bus: EventBus;
      logger: Logger;
      receiptDelayMs: number;
      /** Receipts applied at once. */
      concurrency: number;
    },
  ) {}

  async start(events: CarrierEvents): Promise<void> {
    this.worker = this.options.bus.consume<ReceiptJob>(
      SANDBOX_NETWORK_QUEUE,
      async (job) => {
        const { providerMessageId, status, errorCode } = job.data;
        await events.receipt({
          providerMessageId,
          status,
          occurredAt: new Date(),
          ...(errorCode ? { errorCode } : {}),
        });
        if (status === "delivered" && job.data.channel === "rcs") {
          await this.scheduleReceipt({ ...job.data, status: "read" });
        }
      },
      { concurrency: this.options.concurrency },
    );
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
         (client_ref, provider_message_id, channel, to_number, from_number, segments)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (client_ref) DO UPDATE SET submit_calls = n.submit_calls + 1
       RETURNING n.provider_message_id, n.submit_calls`,
        [
          request.clientRef,
          `sbx-${randomUUID()}`,
          request.channel,
          request.to,
          request.from,
          request.segments,
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
    // A repeated submit schedules the receipt again (under its own job id): it heals a crash
    // between the network taking the message and the receipt being scheduled, and a receipt
    // that ran out of tries before the message was recorded as sent.
    await this.scheduleReceipt({
      ...this.receiptFor(providerMessageId, request.to, request.channel),
      variant: `${row.submit_calls}`,
    });
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

  /** What the network reports for a message it took. */
  private receiptFor(
    providerMessageId: string,
    to: string,
    channel: string,
  ): Omit<ReceiptJob, "variant"> {
    const undelivered = sandboxBehaviour(to) === "undelivered";
    return {
      providerMessageId,
      channel,
      status: undelivered ? "undelivered" : "delivered",
      ...(undelivered ? { errorCode: "handset-unreachable" } : {}),
    };
  }

  /** Sends the receipt of a message again (the sweeper asks when one is overdue). */
  async requestReceipt(message: {
    providerMessageId: string;
    to: string;
    channel: string;
  }): Promise<void> {
    await this.scheduleReceipt({
      ...this.receiptFor(message.providerMessageId, message.to, message.channel),
      variant: `again${Date.now()}`,
    });
  }

  /**
   * Schedules a receipt `receiptDelayMs` from now. Its tries outlast a busy pipeline: a
   * receipt that overtakes the recording of `sent` is retried for about a minute.
   */
  private async scheduleReceipt(job: ReceiptJob): Promise<void> {
    await this.options.bus.publish(
      SANDBOX_NETWORK_QUEUE,
      { name: `receipt.${job.status}`, data: job },
      {
        jobId: `${job.status}.${job.providerMessageId}.${job.variant ?? "0"}`,
        delay: this.options.receiptDelayMs,
        attempts: 12,
        backoff: { type: "exponential", delayMs: 200, maxDelayMs: 10_000, jitter: 0.2 },
      },
    );
  }

  async stop(): Promise<void> {
    await this.worker?.close();
  }
}
