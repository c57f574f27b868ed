import { setTimeout as sleep } from "node:timers/promises";
import {
  isDependencyUnavailable,
  plannedEachTime,
  type Logger,
  type Queryable,
} from "@switchboard/kit";
import type { usage } from "@switchboard/proto";
import type { Completion, IdempotencyStore } from "../policies/idempotency-store.js";

/** What must be durable before one reply is sent. */
export interface ReplyWrites {
  /** Its api.request record (absent when records are off). */
  record?: usage.RequestRecord;
  /** The answer a keyed request keeps for its retries. */
  completion?: Completion;
}

interface Pending {
  writes: ReplyWrites;
  resolve(kept: boolean): void;
  reject(error: unknown): void;
}

export interface ReplyCommitterOptions {
  db: Queryable;
  store: IdempotencyStore;
  logger: Logger;
  /** How long a batch keeps retrying a database that is down before its replies become 503. */
  budgetMs: number;
  /**
   * How long the records committed here are this process's to hand over before any relay may
   * (their `relay_after`; the relay's lease, default 10 s).
   */
  recordLeaseSeconds?: number;
  /** Called after each commit that stored records, with them (the record relay hands them over). */
  onRecords?: (records: usage.RequestRecord[]) => void;
}

/** The records' insert, its three parameters numbered from `first`. */
const insertRecords = (
  first = 1,
) => `INSERT INTO gateway.request_records (request_id, record, relay_after)
  SELECT id, record, now() + $${first + 2}::float8 * interval '1 second'
    FROM unnest($${first}::text[], $${first + 1}::jsonb[]) AS r (id, record)
  ON CONFLICT (request_id) DO NOTHING`;

/**
 * Group commit of what replies promise (docs/api.md §Records, §Idempotency): the records and
 * stored answers of the replies that end while a batch is being written go out together in
 * the next one — one statement, one commit — and each reply is sent only once its batch is
 * committed. A database that is down is retried with backoff for `budgetMs`; past that the
 * batch is refused, and its replies become 503.
 */
export class ReplyCommitter {
  private queue: Pending[] = [];
  private writing = 0;
  private scheduled = false;
  private readonly idle = new Set<() => void>();
  /** Commits made and the records they stored (records per commit: the group commit's yield). */
  readonly stats = { batches: 0, records: 0 };

  constructor(private readonly options: ReplyCommitterOptions) {}

  /** Resolves once committed: true when the completion (if any) was kept under its lease. */
  commit(writes: ReplyWrites): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ writes, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves when nothing is queued or being written. */
  drained(): Promise<void> {
    if (this.queue.length === 0 && this.writing === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.add(resolve));
  }

  private schedule(): void {
    // Two batches at most: one commits while the next gathers.
    if (this.scheduled || this.queue.length === 0 || this.writing >= 2) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const batch = this.queue;
      this.queue = [];
      this.writing += 1;
      void this.write(batch).finally(() => {
        this.writing -= 1;
        this.schedule();
        if (this.queue.length === 0 && this.writing === 0) {
          for (const resolve of this.idle) resolve();
          this.idle.clear();
        }
      });
    });
  }

  private async write(batch: Pending[]): Promise<void> {
    const deadline = Date.now() + this.options.budgetMs;
    for (let pause = 25; ; pause = Math.min(pause * 2, 500)) {
      try {
        const kept = await this.statement(batch.map((p) => p.writes));
        const records = batch.flatMap((p) => (p.writes.record ? [p.writes.record] : []));
        this.stats.batches += 1;
        this.stats.records += records.length;
        if (records.length > 0) this.options.onRecords?.(records);
        for (const p of batch)
          p.resolve(!p.writes.completion || kept.has(p.writes.completion.leaseId));
        return;
      } catch (error) {
        const left = deadline - Date.now();
        if (!isDependencyUnavailable(error) || left <= 0) {
          for (const p of batch) p.reject(error);
          return;
        }
        this.options.logger.warn({ err: error }, "reply commit failed; retrying");
        await sleep(Math.min(pause, left));
      }
    }
  }

  /** Writes the batch in one statement; answers the lease ids whose completion was kept. */
  private async statement(writes: ReplyWrites[]): Promise<Set<string>> {
    const records = writes.flatMap((w) => (w.record ? [w.record] : []));
    const completions = writes.flatMap((w) => (w.completion ? [w.completion] : []));
    const recordValues = [
      records.map((r) => r.requestId),
      records.map((r) => JSON.stringify(r)),
      this.options.recordLeaseSeconds ?? 10,
    ];
    if (completions.length === 0) {
      await this.options.db.query(insertRecords(), recordValues);
      return new Set();
    }
    const complete = this.options.store.completionStatement(completions);
    if (records.length === 0) {
      const { rows } = await this.options.db.query<{ lease_id: string }>(complete);
      return new Set(rows.map((row) => row.lease_id));
    }
    const insert = insertRecords(complete.values.length + 1);
    // Planned for its batch each time: a generic plan, sized for a hundred completions, may scan
    // the keys instead of looking up the one or two a batch holds.
    const { rows } = await this.options.db.query<{ lease_id: string }>(
      plannedEachTime(
        `WITH completed AS (${complete.text}), recorded AS (${insert}) SELECT lease_id FROM completed`,
        [...complete.values, ...recordValues],
      ),
    );
    return new Set(rows.map((row) => row.lease_id));
  }
}
