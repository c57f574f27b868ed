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
  /** When a lingering entry must be written by, at the latest; undefined: at once. */
  deadline: number | undefined;
  resolve: (inserted: number) => void;
  reject: (error: unknown) => void;
}

export interface SubmitOptions {
  /**
   * How long the drafts may wait for others to share their INSERT (default 0: the next tick).
   * A submission that does not linger takes every waiting one with it.
   */
  lingerMs?: number;
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
  private readonly lingerLimit: number;
  private queue: Entry[] = [];
  /** Queued entries that do not linger. */
  private urgent = 0;
  private queuedRecords = 0;
  /** The earliest deadline of the queued entries that linger. */
  private lingerDeadline = Infinity;
  private inFlight = 0;
  private scheduled = false;
  private lingering: { timer: NodeJS.Timeout; at: number } | undefined;
  private readonly idle = new Set<() => void>();
  readonly stats: IngestStats = { batches: 0, records: 0, inserted: 0, failures: 0 };

  constructor(private readonly options: IngestBatcherOptions) {
    this.maxBatch = Math.max(1, options.maxBatch ?? 500);
    this.maxInFlight = Math.max(1, options.maxInFlight ?? 2);
    this.lingerLimit = Math.max(1, options.lingerLimit ?? Infinity);
  }

  /** Signs and appends the drafts; resolves with how many were new once they are committed. */
  submit(drafts: readonly RecordDraft[], options: SubmitOptions = {}): Promise<number> {
    if (drafts.length === 0) return Promise.resolve(0);
    const lingerMs = options.lingerMs ?? 0;
    const deadline = lingerMs > 0 ? performance.now() + lingerMs : undefined;
    return new Promise<number>((resolve, reject) => {
      this.queue.push({ drafts, deadline, resolve, reject });
      this.queuedRecords += drafts.length;
      if (deadline === undefined) this.urgent += 1;
      else this.lingerDeadline = Math.min(this.lingerDeadline, deadline);
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
    const waitsForMore =
      this.urgent === 0 &&
      this.queuedRecords < this.maxBatch &&
      this.queue.length < this.lingerLimit;
    if (waitsForMore && this.lingerDeadline > performance.now()) {
      this.lingerUntil(this.lingerDeadline);
      return;
    }
    this.stopLingering();
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private lingerUntil(at: number): void {
    if (this.lingering && this.lingering.at <= at) return;
    this.stopLingering();
    const timer = setTimeout(
      () => {
        this.lingering = undefined;
        this.schedule();
      },
      Math.max(0, Math.ceil(at - performance.now())),
    );
    this.lingering = { timer, at };
  }

  private stopLingering(): void {
    if (this.lingering) clearTimeout(this.lingering.timer);
    this.lingering = undefined;
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
        if (entry.deadline === undefined) this.urgent -= 1;
      }
      this.lingerDeadline = this.queue.reduce(
        (earliest, entry) => Math.min(earliest, entry.deadline ?? Infinity),
        Infinity,
      );
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
