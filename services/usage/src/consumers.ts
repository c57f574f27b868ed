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

/**
 * A fact's record lingers: the facts of a call or a message arrive one by one over its life, and
 * at 100 calls a second a 20 ms wait puts the facts of several in one INSERT. No caller waits on
 * a fact's record (the job does, which holds its event until the record is committed), and a
 * request record, which a reply does wait on, is written at once and takes the facts with it.
 * The wait ends as soon as every job the consumer takes at once is waiting, so it never caps the
 * consumer's throughput.
 */
export const DEFAULT_FACT_LINGER_MS = 20;

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
  const lingerMs = options.factLingerMs ?? DEFAULT_FACT_LINGER_MS;
  const concurrency = options.factConcurrency ?? 64;
  const batcher = new IngestBatcher({
    pool,
    signer,
    logger,
    lingerLimit: concurrency,
    ...(options.maxBatch ? { maxBatch: options.maxBatch } : {}),
  });
  const facts = consumeEvents(
    bus,
    "usage",
    async (event) => {
      const draft = factDraft(event);
      if (draft) await batcher.submit([draft], { lingerMs });
    },
    { concurrency },
  );
  return {
    batcher,
    close: async () => {
      await facts.close();
      await batcher.drained();
    },
  };
}
