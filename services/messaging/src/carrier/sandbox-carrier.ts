import { randomUUID } from "node:crypto";
import type { EventBus, Logger, Pool, QueueWorker } from "@switchboard/kit";
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
      pool: Pool;
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
    const { rows } = await this.options.pool.query<{
      provider_message_id: string;
      inserted: boolean;
    }>(
      `INSERT INTO messaging.sandbox_network AS n
         (client_ref, provider_message_id, channel, to_number, from_number, segments)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (client_ref) DO UPDATE SET submit_calls = n.submit_calls + 1
       RETURNING n.provider_message_id, (xmax = 0) AS inserted`,
      [
        request.clientRef,
        `sbx-${randomUUID()}`,
        request.channel,
        request.to,
        request.from,
        request.segments,
      ],
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
    // A repeat re-schedules the receipt too (deduped by job id): it heals a crash between the
    // network taking the message and the receipt being scheduled.
    await this.scheduleReceipt({
      providerMessageId,
      channel: request.channel,
      status: behaviour === "undelivered" ? "undelivered" : "delivered",
      ...(behaviour === "undelivered" ? { errorCode: "handset-unreachable" } : {}),
    });
    if (behaviour === "answer-lost-once" && row.inserted) {
      throw new CarrierError(
        "network-timeout",
        "the network did not answer in time",
        "transient",
        "unknown",
      );
    }
    return { providerMessageId };
  }

  private async scheduleReceipt(job: ReceiptJob): Promise<void> {
    await this.options.bus.publish(
      SANDBOX_NETWORK_QUEUE,
      { name: `receipt.${job.status}`, data: job },
      {
        jobId: `${job.status}.${job.providerMessageId}`,
        delay: this.options.receiptDelayMs,
        attempts: 8,
        backoff: { type: "exponential", delayMs: 100, maxDelayMs: 5_000 },
      },
    );
  }

  async stop(): Promise<void> {
    await this.worker?.close();
  }
}
