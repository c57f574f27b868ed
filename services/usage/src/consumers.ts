import {
  consumeEvents,
  consumeOnce,
  usageRecordQueue,
  withTransaction,
  type EventBus,
  type Logger,
  type Pool,
} from "@switchboard/kit";
import { factDraft } from "./fact-records.js";
import { IngestBatcher } from "./ingest-batcher.js";
import { appendRecords } from "./ledger-writer.js";
import type { RecordSigner } from "./record-signer.js";
import { requestDrafts } from "./request-records.js";

/** The consumer name under which business facts are marked processed (usage.processed_events). */
export const FACT_CONSUMER = "usage-ledger";

export interface UsageConsumerOptions {
  pool: Pool;
  bus: EventBus;
  signer: RecordSigner;
  logger: Logger;
  /** `usage.records` jobs taken at once (default 256); their records share INSERTs. */
  recordConcurrency?: number;
  /** Business-fact events taken at once (default 8). */
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
 * - `events.usage`: business facts relayed from the services' outboxes; each one is applied
 *   with consumeOnce, so its record and the processed mark commit in one transaction.
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
      if (!draft) return;
      await withTransaction(pool, (client) =>
        consumeOnce(client, "usage", FACT_CONSUMER, event.id, async (tx) => {
          await appendRecords(tx, await signer.signRecords([draft]));
        }),
      );
    },
    { concurrency: options.factConcurrency ?? 8 },
  );
  return {
    batcher,
    close: async () => {
      await Promise.all([records.close(), facts.close()]);
      await batcher.drained();
    },
  };
}
