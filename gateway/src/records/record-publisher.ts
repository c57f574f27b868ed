import type { Logger } from "@switchboard/kit";
import type { usage } from "@switchboard/proto";

/** Hands one batch of records to durable storage (the queue); the batch id is its dedupe key. */
export type RecordSink = (records: usage.RequestRecord[], batchId: string) => Promise<void>;

export interface RecordPublisherOptions {
  sink: RecordSink;
  logger: Logger;
  /** How long a reply waits for its record's hand-off before going out anyway (default 1000 ms). */
  timeoutMs?: number;
  /** Records per published batch (default 200). */
  maxBatch?: number;
  /**
   * Batches being published at once (default 1); records arriving meanwhile share the next.
   * Every batch is a queue job that the usage service must fetch and finish, so one at a time
   * halves the jobs per record under load (bench/results/compare.md) for one queue round trip
   * of added wait at most.
   */
  maxInFlight?: number;
  /** Records kept in memory while the queue is unavailable (default 100 000); beyond, the oldest go. */
  maxBacklog?: number;
}

export interface RecordPublisherStats {
  records: number;
  batches: number;
  /** Publishes that failed (their batch is retried). */
  failures: number;
  /** Replies sent before their record was handed off (the record was kept for retry). */
  released: number;
  /** Records given up on: the backlog overflowed while the queue was away. */
  dropped: number;
}

interface Batch {
  id: string;
  records: usage.RequestRecord[];
  waiters: (() => void)[];
  tries: number;
}

const retryDelayMs = (tries: number) => Math.min(100 * 2 ** Math.max(0, tries - 1), 5_000);

/**
 * Group commit for the record path. Each reply's record joins the batch being formed; a batch
 * is published as soon as fewer than `maxInFlight` are in flight, so a lone request pays one
 * queue round trip while, under load, records that arrive during a publish share the next one.
 * `record()` resolves when the record is in the queue — the reply is sent only then — and
 * never rejects. If the queue fails or is slow (`timeoutMs`), the publisher turns degraded:
 * replies stop waiting, records are kept in memory and republished with the same batch id
 * (the queue drops a copy it already holds), and the first successful publish ends it. What a
 * degraded publisher holds is lost if the process dies before the queue is back.
 */
export class RecordPublisher {
  private readonly timeoutMs: number;
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private readonly maxBacklog: number;
  private forming: Batch | undefined;
  private readonly ready: Batch[] = [];
  private retrying = 0;
  private inFlight = 0;
  private degraded = false;
  private closing = false;
  private readonly settledListeners = new Set<() => void>();
  readonly stats: RecordPublisherStats = {
    records: 0,
    batches: 0,
    failures: 0,
    released: 0,
    dropped: 0,
  };

  constructor(private readonly options: RecordPublisherOptions) {
    this.timeoutMs = options.timeoutMs ?? 1_000;
    this.maxBatch = Math.max(1, options.maxBatch ?? 200);
    this.maxInFlight = Math.max(1, options.maxInFlight ?? 1);
    this.maxBacklog = Math.max(1, options.maxBacklog ?? 100_000);
  }

  /** Records not yet in the queue. */
  get backlog(): number {
    const waiting = [...this.ready, ...(this.forming ? [this.forming] : [])];
    return waiting.reduce((n, batch) => n + batch.records.length, 0) + this.retrying;
  }

  /** Resolves once the record is in the queue (or, degraded, at once); never rejects. */
  record(record: usage.RequestRecord): Promise<void> {
    this.stats.records += 1;
    this.shed();
    if (!this.forming || this.forming.records.length >= this.maxBatch) {
      if (this.forming) this.ready.push(this.forming);
      this.forming = { id: record.requestId, records: [], waiters: [], tries: 0 };
    }
    const batch = this.forming;
    batch.records.push(record);
    const handedOff = this.degraded
      ? Promise.resolve()
      : new Promise<void>((resolve) => batch.waiters.push(resolve));
    this.pump();
    return handedOff;
  }

  /** Publishes what is left, waiting up to `graceMs`; logs what could not be handed off. */
  async close(graceMs = 5_000): Promise<void> {
    this.closing = true;
    this.pump();
    const deadline = Date.now() + graceMs;
    while (this.backlog + this.inFlight > 0 && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        this.settledListeners.add(resolve);
        setTimeout(resolve, Math.max(1, Math.min(50, deadline - Date.now()))).unref();
      });
      this.pump();
    }
    if (this.backlog > 0) {
      this.options.logger.error(
        { records: this.backlog },
        "usage records not handed off at shutdown",
      );
    }
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight) {
      const batch = this.ready.shift() ?? this.takeForming();
      if (!batch) return;
      this.publish(batch);
    }
  }

  private takeForming(): Batch | undefined {
    const batch = this.forming;
    this.forming = undefined;
    return batch;
  }

  private publish(batch: Batch): void {
    this.inFlight += 1;
    batch.tries += 1;
    const release = () => {
      for (const resolve of batch.waiters.splice(0)) resolve();
    };
    const timer = setTimeout(() => {
      if (batch.waiters.length === 0) return;
      this.degraded = true;
      this.stats.released += batch.waiters.length;
      release();
    }, this.timeoutMs);
    this.options
      .sink(batch.records, batch.id)
      .then(
        () => {
          this.degraded = false;
          this.stats.batches += 1;
          release();
        },
        (error: unknown) => {
          this.degraded = true;
          this.stats.failures += 1;
          this.stats.released += batch.waiters.length;
          release();
          this.options.logger.warn(
            { err: error, records: batch.records.length, tries: batch.tries },
            "usage records could not be queued; retrying",
          );
          this.retryLater(batch);
        },
      )
      .finally(() => {
        clearTimeout(timer);
        this.inFlight -= 1;
        for (const listener of this.settledListeners) listener();
        this.settledListeners.clear();
        this.pump();
      });
  }

  private retryLater(batch: Batch): void {
    this.retrying += batch.records.length;
    const requeue = () => {
      this.retrying -= batch.records.length;
      this.ready.push(batch);
      this.pump();
    };
    if (this.closing) return requeue();
    setTimeout(requeue, retryDelayMs(batch.tries)).unref();
  }

  /** Keeps the backlog bounded while the queue is away: the oldest waiting records go first. */
  private shed(): void {
    while (this.backlog >= this.maxBacklog && this.ready.length > 0) {
      const oldest = this.ready.shift()!;
      this.stats.dropped += oldest.records.length;
      for (const resolve of oldest.waiters.splice(0)) resolve();
      this.options.logger.error(
        { records: oldest.records.length, first: oldest.id },
        "usage record backlog full; oldest records dropped",
      );
    }
  }
}
