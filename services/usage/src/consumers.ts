import {
  consumeEvents,
  usageRecordQueue,
  type EventBus,
  type Logger,
  type Pool,
} from "@switchboard/kit";
import { factDraft } from "./fact-records.js";
import { IngestBatcher } from "./ingest-batcher.js";
import type { RecordSigner } from "./record-signer.js";
import { requestDrafts } from "./request-records.js";

export interface UsageConsumerOptions {
  pool: Pool;
  bus: EventBus;
  signer: RecordSigner;
  logger: Logger;
  /** `usage.records` jobs taken at once (default 256); their records share INSERTs. */
  recordConcurrency?: number;
  /** Business-fact events taken at once (default 64); their records share INSERTs too. */
  factConcurrency?: number;
  /** Records per INSERT (default 500). */
  maxBatch?: number;
}

export interface UsageConsumers {
  batcher: IngestBatcher;
  /** Stops taking jobs; resolves once the jobs in flight are committed (or failed back). */
  close(): Promise<void>;
}

/**
 * The two ways records arrive, both at-least-once and both idempotent:
 * - `usage.records`: the gateway's api.request batches, group-committed by the IngestBatcher;
 *   a record already in the ledger (same request id) is skipped by the unique index.
 * - `events.usage`: business facts relayed from the services' outboxes, group-committed by the
 *   same batcher; the ledger's unique index on the source event id skips a redelivered fact
 *   (no separate processed-events mark: the record is the mark).
 * A job completes only after its records are committed, so a crash re-delivers, never loses.
 */
export function startUsageConsumers(options: UsageConsumerOptions): UsageConsumers {
  const { pool, bus, signer, logger } = options;
  const batcher = new IngestBatcher({
    pool,
    signer,
    logger,
    ...(options.maxBatch ? { maxBatch: options.maxBatch } : {}),
  });
  const records = bus.consume(
    usageRecordQueue,
    async (job) => {
      await batcher.submit(requestDrafts(job.data, logger));
    },
    { concurrency: options.recordConcurrency ?? 256 },
  );
  const facts = consumeEvents(
    bus,
    "usage",
    async (event) => {
      const draft = factDraft(event);
      if (draft) await batcher.submit([draft]);
    },
    { concurrency: options.factConcurrency ?? 64 },
  );
  return {
    batcher,
    close: async () => {
      await Promise.all([records.close(), facts.close()]);
      await batcher.drained();
    },
  };
}
