import type { Logger, Queryable } from "@switchboard/kit";
import type { usage } from "@switchboard/proto";

export interface RecordRelayOptions {
  db: Queryable;
  /** Hands a batch to the ledger; resolves once the ledger has committed it. */
  append: (records: usage.RequestRecord[]) => Promise<void>;
  logger: Logger;
  /** Records per hand-off (default 500). */
  batchSize?: number;
  /** How long a batch being handed over is this relay's before another may resend it (default 10 s: twice the hand-off's deadline). */
  leaseSeconds?: number;
  /** The idle poll for rows other relays left (a replica that died): from 1 s, doubling up to this (default 30 s). */
  maxPollMs?: number;
}

/**
 * Claims up to $1 rows due for relay — skipping rows another relay is claiming right now — and
 * leases them for $2 seconds, in one statement (no transaction held across the hand-off).
 */
const CLAIM = `
UPDATE gateway.request_records SET relay_after = now() + $2::float8 * interval '1 second'
 WHERE request_id IN (SELECT request_id FROM gateway.request_records
                       WHERE relay_after <= now() ORDER BY relay_after
                       LIMIT $1 FOR UPDATE SKIP LOCKED)
RETURNING request_id, record`;

const DELETE = `DELETE FROM gateway.request_records WHERE request_id = ANY($1::text[])`;

/** A batch the ledger did not take: due again in a second (not at the end of its lease). */
const RETRY_SOON = `UPDATE gateway.request_records SET relay_after = now() + interval '1 second'
 WHERE request_id = ANY($1::text[])`;

/**
 * The gateway's record outbox relay: hands committed api.request records to the usage
 * service's ledger in batches, then deletes them. Woken as records commit (in this process);
 * an idle poll picks up what a dead replica or a failed hand-off left. At-least-once: a crash
 * between the hand-off and the delete resends, and the ledger skips a request id it holds.
 */
export class RecordRelay {
  private readonly batchSize: number;
  private readonly leaseSeconds: number;
  private readonly maxPollMs: number;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private pollMs = 1_000;
  /** Records committed by this process and not yet relayed by it (the backlog gauge). */
  private pending = 0;

  constructor(private readonly options: RecordRelayOptions) {
    this.batchSize = options.batchSize ?? 500;
    this.leaseSeconds = options.leaseSeconds ?? 10;
    this.maxPollMs = options.maxPollMs ?? 30_000;
  }

  get backlog(): number {
    return Math.max(0, this.pending);
  }

  start(): void {
    this.wake();
  }

  /** Records were committed: relay them soon. */
  committed(count: number): void {
    this.pending += count;
    this.pollMs = 1_000;
    this.wake();
  }

  /** Relays until nothing is due; one pass at a time (a wake meanwhile runs another). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = this.drainDue().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.wake();
      } else if (!this.stopped) {
        this.timer = setTimeout(() => this.wake(), this.pollMs);
        this.timer.unref();
        this.pollMs = Math.min(this.pollMs * 2, this.maxPollMs);
      }
    });
  }

  /** Stops waking; one last pass hands over what is due (a row left here is relayed by another replica, or at the next start). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.drainDue();
  }

  /** Relays batch after batch while they come full; a failure ends the pass (the poll retries). */
  private async drainDue(): Promise<void> {
    try {
      while ((await this.relayBatch()) === this.batchSize && !this.stopped);
    } catch (error) {
      this.pollMs = 1_000;
      this.options.logger.warn({ err: error }, "usage records not relayed yet; retrying");
    }
  }

  private async relayBatch(): Promise<number> {
    const { rows } = await this.options.db.query<{
      request_id: string;
      record: usage.RequestRecord;
    }>(CLAIM, [this.batchSize, this.leaseSeconds]);
    if (rows.length === 0) return 0;
    const ids = rows.map((row) => row.request_id);
    try {
      await this.options.append(rows.map((row) => row.record));
    } catch (error) {
      // Best effort: if this fails too, the lease lets the rows come due later.
      await this.options.db.query(RETRY_SOON, [ids]).catch(() => undefined);
      throw error;
    }
    await this.options.db.query(DELETE, [ids]);
    this.pending -= rows.length;
    return rows.length;
  }
}
