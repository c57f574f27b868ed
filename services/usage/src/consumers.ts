import { consumeEvents, type EventBus, type Logger, type Pool } from "@switchboard/kit";
import { factDraft } from "./fact-records.js";
import { IngestBatcher } from "./ingest-batcher.js";
import type { RecordSigner } from "./record-signer.js";

export interface UsageConsumerOptions {
  pool: Pool;
  bus: EventBus;
  signer: RecordSigner;
  logger: Logger;
  /** Business-fact events taken at once (default 64); their records share INSERTs too. */
  factConcurrency?: number;
  /** Records per INSERT (default 500). */
  maxBatch?: number;
  /** How long a fact's record may wait for others to share its INSERT (default 20 ms). */
  factLingerMs?: number;
}

export interface UsageConsumers {
  batcher: IngestBatcher;
  /** Stops taking jobs; resolves once the jobs in flight are committed (or failed back). */
  close(): Promise<void>;
}

/**
 * Business facts (`events.usage`, relayed from the services' outboxes), at-least-once and
 * idempotent: group-committed by the IngestBatcher, which the gateway's relayed api.request
 * records share (AppendRequestRecords); the ledger's unique index on the source event id skips
 * a redelivered fact (no separate processed-events mark: the record is the mark). A job
 * completes only after its record is committed, so a crash re-delivers, never loses.
 */
export function startUsageConsumers(options: UsageConsumerOptions): UsageConsumers {
  const { pool, bus, signer, logger } = options;
  const concurrency = options.factConcurrency ?? 64;
  const batcher = new IngestBatcher({
    pool,
    signer,
    logger,
    ...(options.factLingerMs !== undefined ? { lingerMs: options.factLingerMs } : {}),
    lingerLimit: concurrency,
    ...(options.maxBatch ? { maxBatch: options.maxBatch } : {}),
  });
  const facts = consumeEvents(
    bus,
    "usage",
    async (event) => {
      const draft = factDraft(event);
      if (draft) await batcher.submit([draft], { linger: true });
    },
    { concurrency, batched: true },
  );
  return {
    batcher,
    close: async () => {
      await facts.close();
      await batcher.drained();
    },
  };
}
