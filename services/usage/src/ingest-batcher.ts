import type { Logger, Pool } from "@switchboard/kit";
import type { LedgerRow, RecordDraft } from "./ledger-record.js";
import { appendRecords } from "./ledger-writer.js";
import type { RecordSigner } from "./record-signer.js";

/**
 * A fact's record lingers: the facts of a call or a message arrive one by one over its life, and
 * at 100 calls a second a 20 ms wait puts the facts of several in one INSERT. No caller waits on
 * a fact's record (the job does, which holds its event until the record is committed), and a
 * request record, which a reply does wait on, is written at once and takes the facts with it.
 * The wait ends as soon as every job the consumer takes at once is waiting, so it never caps the
 * consumer's throughput.
 */
export const DEFAULT_FACT_LINGER_MS = 20;

export interface IngestBatcherOptions {
  pool: Pool;
  signer: RecordSigner;
  logger: Logger;
  /** Records per INSERT (default 500). */
  maxBatch?: number;
  /** Batches being written at once (default 2): one signs while the other commits. */
  maxInFlight?: number;
  /** How long a lingering submission may wait for others (default DEFAULT_FACT_LINGER_MS). */
  lingerMs?: number;
  /**
   * Lingering submissions go as soon as this many wait (default: no limit): a consumer whose
   * every job is waiting in the batch can add nothing more to it.
   */
  lingerLimit?: number;
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
  lingers: boolean;
  resolve: (inserted: number) => void;
  reject: (error: unknown) => void;
}

export interface SubmitOptions {
  /**
   * The drafts may wait up to `lingerMs` for others to share their INSERT (default: they go on
   * the next tick). A submission that does not linger takes every waiting one with it.
   */
  linger?: boolean;
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
 * A submission may linger (business facts do: no caller waits on their records), so that facts
 * arriving one by one over a call's life share INSERTs; a request record does not, and carries
 * the lingering facts with it.
 */
export class IngestBatcher {
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private readonly lingerMs: number;
  private readonly lingerLimit: number;
  private queue: Entry[] = [];
  /** Queued entries that do not linger. */
  private urgent = 0;
  private queuedRecords = 0;
  private inFlight = 0;
  private scheduled = false;
  /** Runs out `lingerMs` after the first of the waiting submissions came. */
  private lingering: NodeJS.Timeout | undefined;
  private lingeredEnough = false;
  private readonly idle = new Set<() => void>();
  readonly stats: IngestStats = { batches: 0, records: 0, inserted: 0, failures: 0 };

  constructor(private readonly options: IngestBatcherOptions) {
    this.maxBatch = Math.max(1, options.maxBatch ?? 500);
    this.maxInFlight = Math.max(1, options.maxInFlight ?? 2);
    this.lingerMs = options.lingerMs ?? DEFAULT_FACT_LINGER_MS;
    this.lingerLimit = Math.max(1, options.lingerLimit ?? Infinity);
  }

  /** Signs and appends the drafts; resolves with how many were new once they are committed. */
  submit(drafts: readonly RecordDraft[], options: SubmitOptions = {}): Promise<number> {
    if (drafts.length === 0) return Promise.resolve(0);
    const lingers = options.linger === true;
    return new Promise<number>((resolve, reject) => {
      this.queue.push({ drafts, lingers, resolve, reject });
      this.queuedRecords += drafts.length;
      if (!lingers) this.urgent += 1;
      this.schedule();
    });
  }

  /** Resolves when nothing is queued or being written. */
  drained(): Promise<void> {
    if (this.queue.length === 0 && this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.add(resolve));
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0) return;
    const waitsForMore =
      !this.lingeredEnough &&
      this.urgent === 0 &&
      this.queuedRecords < this.maxBatch &&
      this.queue.length < this.lingerLimit;
    if (waitsForMore) {
      this.lingering ??= setTimeout(() => {
        this.lingering = undefined;
        this.lingeredEnough = true;
        this.schedule();
      }, this.lingerMs);
      return;
    }
    if (this.inFlight >= this.maxInFlight) return;
    clearTimeout(this.lingering);
    this.lingering = undefined;
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
        this.queuedRecords -= entry.drafts.length;
        if (!entry.lingers) this.urgent -= 1;
      }
      // What a full batch left behind has waited long enough.
      this.lingeredEnough = this.queue.length > 0;
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
