import type { Logger, Pool } from "@switchboard/kit";
import type { LedgerRow, RecordDraft } from "./ledger-record.js";
import { appendRecords } from "./ledger-writer.js";
import type { RecordSigner } from "./record-signer.js";

export interface IngestBatcherOptions {
  pool: Pool;
  signer: RecordSigner;
  logger: Logger;
  /** Records per INSERT (default 500). */
  maxBatch?: number;
  /** Batches being written at once (default 2): one signs while the other commits. */
  maxInFlight?: number;
}

export interface IngestStats {
  batches: number;
  records: number;
  /** Records that were new (the rest were redeliveries, already in the ledger). */
  inserted: number;
  failures: number;
}

interface Entry {
  drafts: readonly RecordDraft[];
  resolve: (inserted: number) => void;
  reject: (error: unknown) => void;
}

/** SQLSTATE classes of a bad row (data exception, integrity constraint), not a bad connection. */
const isDataError = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("22") || code.startsWith("23"));
};

/**
 * Group commit for the ledger: records submitted while a batch is being written wait for the
 * next one, so under load each INSERT carries hundreds of records (signed in one pass with the
 * active key) while a lone record still goes out on the next tick. A submission resolves once
 * its records are committed — only then may the job that carried them complete — and rejects
 * if they were not (the job is retried; the retry is idempotent). A batch that fails on a bad
 * row is retried submission by submission, so one malformed job cannot hold up the others.
 */
export class IngestBatcher {
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private queue: Entry[] = [];
  private inFlight = 0;
  private scheduled = false;
  private readonly idle = new Set<() => void>();
  readonly stats: IngestStats = { batches: 0, records: 0, inserted: 0, failures: 0 };

  constructor(private readonly options: IngestBatcherOptions) {
    this.maxBatch = Math.max(1, options.maxBatch ?? 500);
    this.maxInFlight = Math.max(1, options.maxInFlight ?? 2);
  }

  /** Signs and appends the drafts; resolves with how many were new once they are committed. */
  submit(drafts: readonly RecordDraft[]): Promise<number> {
    if (drafts.length === 0) return Promise.resolve(0);
    return new Promise<number>((resolve, reject) => {
      this.queue.push({ drafts, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves when nothing is queued or being written. */
  drained(): Promise<void> {
    if (this.queue.length === 0 && this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.add(resolve));
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0 || this.inFlight >= this.maxInFlight) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch: Entry[] = [];
      let size = 0;
      while (this.queue.length > 0 && (batch.length === 0 || size < this.maxBatch)) {
        const entry = this.queue.shift()!;
        batch.push(entry);
        size += entry.drafts.length;
      }
      this.inFlight += 1;
      void this.write(batch, true).finally(() => {
        this.inFlight -= 1;
        this.schedule();
        if (this.queue.length === 0 && this.inFlight === 0) {
          for (const resolve of this.idle) resolve();
          this.idle.clear();
        }
      });
    }
  }

  private async write(batch: Entry[], isolateOnDataError: boolean): Promise<void> {
    try {
      const rows = await this.options.signer.signRecords(batch.flatMap((entry) => entry.drafts));
      const inserted = new Set(await appendRecords(this.options.pool, rows));
      this.stats.batches += 1;
      this.stats.records += rows.length;
      this.stats.inserted += inserted.size;
      let offset = 0;
      for (const entry of batch) {
        const mine: LedgerRow[] = rows.slice(offset, offset + entry.drafts.length);
        offset += entry.drafts.length;
        entry.resolve(mine.filter((row) => inserted.has(row.id)).length);
      }
    } catch (error) {
      if (isolateOnDataError && batch.length > 1 && isDataError(error)) {
        await Promise.all(batch.map((entry) => this.write([entry], false)));
        return;
      }
      this.stats.failures += 1;
      this.options.logger.warn(
        { err: error, records: batch.reduce((n, e) => n + e.drafts.length, 0) },
        "usage records not stored; their jobs will be retried",
      );
      for (const entry of batch) entry.reject(error);
    }
  }
}
