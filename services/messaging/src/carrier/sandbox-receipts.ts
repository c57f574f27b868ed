import { createWakeTimer, type Logger, type Pool } from "@switchboard/kit";
import type { CarrierEvents, ReceiptStatus } from "./carrier.js";
import { sandboxBehaviour } from "./sandbox-outcomes.js";

/** Tries of one receipt: its backoff (0.2 s doubling to 10 s) outlasts a busy pipeline. */
const maxTries = 12;

/** What the network reports first for a message it took. */
export function firstReceipt(to: string): ReceiptStatus {
  return sandboxBehaviour(to) === "undelivered" ? "undelivered" : "delivered";
}

interface TakenRow {
  client_ref: string;
  provider_message_id: string;
  channel: string;
  to_number: string;
  receipt_status: ReceiptStatus;
  receipt_tries: number;
  /** The due time the take set (its text, exact): the row is still this take's while unchanged. */
  lease: string;
  retry_at: Date;
}

export interface SandboxReceipts {
  /** A receipt falls due at `atMs` (a submit here just scheduled it). */
  wake(atMs: number): void;
  start(events: CarrierEvents): void;
  /** Sends every due receipt now, until none is due (tests). */
  drainDue(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Sends the sandbox network's receipts when they fall due, from its rows: one statement takes
 * a batch of due receipts (`FOR UPDATE SKIP LOCKED`, pushing each one's due time out by its
 * backoff, so replicas take disjoint batches and a receipt whose sending fails or whose process
 * dies is taken again then), the receipts go to the pipeline side by side, and one statement
 * marks what went (an RCS message delivered is read one delay later) and reads when the next
 * receipt is due. Woken in-process for the receipts its submits schedule, polling every
 * `pollMs` for the rest (other replicas', those due before a restart); batches start at least
 * `coalesceMs` apart (unless the last was full), so a stream of receipts shares them. A receipt that fails
 * `maxTries` times is dropped; the sweeper asks for an overdue one again (requestReceipt).
 */
export function createSandboxReceipts(options: {
  pool: Pool;
  logger: Logger;
  delayMs: number;
  /** Receipts sent to the pipeline at once. */
  concurrency: number;
  batchSize?: number;
  pollMs?: number;
  coalesceMs?: number;
}): SandboxReceipts {
  const { pool, logger, delayMs } = options;
  const batchSize = options.batchSize ?? 200;
  const pollMs = options.pollMs ?? 2_000;
  const coalesceMs = options.coalesceMs ?? 50;
  let events: CarrierEvents | undefined;
  let stopping = false;
  let lastBatchAt = -Infinity;
  const timer = createWakeTimer(loop);
  /** Runs at `wanted`, no sooner than coalesceMs after the last batch began. */
  const arm = (wanted: number) => timer.armAt(Math.max(wanted, lastBatchAt + coalesceMs));

  async function loop(again: () => boolean) {
    let next: number | undefined;
    do {
      try {
        let batch: Batch;
        do {
          lastBatchAt = Date.now();
          batch = await sendBatch();
        } while (batch.full && !stopping);
        next = batch.nextDue;
      } catch (error) {
        next = undefined;
        logger.warn({ err: error }, "sandbox receipts: a batch failed; will retry");
      }
    } while (again() && !stopping);
    if (!stopping) arm(Math.min(next ?? Infinity, Date.now() + pollMs));
  }

  interface Batch {
    full: boolean;
    sent: number;
    nextDue: number | undefined;
  }

  async function sendBatch(): Promise<Batch> {
    const bound = events;
    if (!bound) throw new Error("the sandbox receipts were not started");
    const { rows } = await pool.query<TakenRow>(
      `UPDATE messaging.sandbox_network n
          SET receipt_due_at = now() + make_interval(
                secs => least(0.2 * power(2, n.receipt_tries), 10) * (0.9 + 0.2 * random())),
              receipt_tries = n.receipt_tries + 1
        WHERE n.client_ref IN (
          SELECT client_ref FROM messaging.sandbox_network
           WHERE receipt_due_at <= now()
           ORDER BY receipt_due_at
           LIMIT $1
           FOR UPDATE SKIP LOCKED)
       RETURNING n.client_ref, n.provider_message_id, n.channel, n.to_number, n.receipt_status,
                 n.receipt_tries, n.receipt_due_at::text AS lease, n.receipt_due_at AS retry_at`,
      [batchSize],
    );
    const sent = await sendAll(bound, rows);
    const taken = rows.map((row, i) => ({ row, sent: sent[i] === true }));
    // Sent, or out of tries; the others wait for their retry.
    const ended = taken.filter(({ row, sent }) => sent || row.receipt_tries >= maxTries);
    const next = ended.map(({ row, sent }) =>
      sent && row.receipt_status === "delivered" && row.channel === "rcs" ? "read" : null,
    );
    const { rows: after } = await pool.query<{ next_due: Date | null }>(
      `WITH ended AS (
         UPDATE messaging.sandbox_network n
            SET receipt_status = d.next,
                receipt_due_at = CASE WHEN d.next IS NOT NULL
                                      THEN now() + make_interval(secs => $4 / 1000.0) END,
                receipt_tries = 0
           FROM unnest($1::text[], $2::text[], $3::text[]) AS d(client_ref, lease, next)
          WHERE n.client_ref = d.client_ref AND n.receipt_due_at = d.lease::timestamptz)
       SELECT min(receipt_due_at) AS next_due FROM messaging.sandbox_network
        WHERE receipt_due_at IS NOT NULL AND client_ref <> ALL($1::text[])`,
      [ended.map(({ row }) => row.client_ref), ended.map(({ row }) => row.lease), next, delayMs],
    );
    for (const { row } of taken.filter((one) => !ended.includes(one))) {
      wake(row.retry_at.getTime());
    }
    if (next.includes("read")) wake(Date.now() + delayMs);
    const dropped = ended.filter(({ sent }) => !sent).map(({ row }) => row.provider_message_id);
    if (dropped.length > 0) {
      logger.warn(
        { receipts: dropped },
        "sandbox receipts: dropped after their last try (the sweeper asks again)",
      );
    }
    return {
      full: rows.length === batchSize,
      sent: sent.filter(Boolean).length,
      nextDue: after[0]?.next_due?.getTime(),
    };
  }

  /** Whether each receipt reached the pipeline, `concurrency` at a time. */
  async function sendAll(bound: CarrierEvents, rows: TakenRow[]): Promise<boolean[]> {
    const outcomes = rows.map(() => false);
    let nextIndex = 0;
    const worker = async () => {
      for (let i = nextIndex++; i < rows.length; i = nextIndex++) {
        const row = rows[i] as TakenRow;
        try {
          await bound.receipt({
            providerMessageId: row.provider_message_id,
            status: row.receipt_status,
            occurredAt: new Date(),
            ...(row.receipt_status === "undelivered" ? { errorCode: "handset-unreachable" } : {}),
          });
          outcomes[i] = true;
        } catch (error) {
          logger.debug({ err: error, tries: row.receipt_tries }, "sandbox receipt not taken yet");
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(options.concurrency, rows.length) }, worker));
    return outcomes;
  }

  function wake(atMs: number) {
    if (events && !stopping) arm(atMs);
  }

  return {
    wake,
    start(bound) {
      events = bound;
      arm(Date.now());
    },
    async drainDue() {
      let total = 0;
      for (;;) {
        const batch = await sendBatch();
        total += batch.sent;
        if (!batch.full) return total;
      }
    },
    async stop() {
      stopping = true;
      await timer.stop();
    },
  };
}
