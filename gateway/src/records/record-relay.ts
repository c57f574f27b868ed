import type { Logger, Queryable } from "@switchboard/kit";
import type { usage } from "@switchboard/proto";

export interface RecordRelayOptions {
  db: Queryable;
  /** Hands a batch to the ledger; resolves once the ledger has committed it. */
  append: (records: usage.RequestRecord[]) => Promise<void>;
  logger: Logger;
  /** Records per hand-off (default 500). */
  batchSize?: number;
  /**
   * How long a row stays its relay's before any relay may send it (default 10 s: twice the
   * hand-off's deadline): the committing process's own rows, and a batch claimed by a poll.
   */
  leaseSeconds?: number;
  /** The poll for rows no relay holds (a replica died, a hand-off failed): from 1 s, doubling up to this (default 30 s). */
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

/**
 * The gateway's record outbox relay: hands committed api.request records to the usage
 * service's ledger in batches, then deletes them.
 * - The records this process commits are leased to it by their insert (`relay_after`): it hands
 *   them over from memory as soon as they commit, with no read and no claim.
 * - A poll (1 s, backing off to 30 s) claims the rows whose lease ran out: those of a replica
 *   that died and of hand-offs that failed.
 * At-least-once: a crash between the hand-off and the delete resends, and the ledger skips a
 * request id it holds.
 */
export class RecordRelay {
  private readonly batchSize: number;
  readonly leaseSeconds: number;
  private readonly maxPollMs: number;
  /** Committed here, not yet handed over. */
  private own: usage.RequestRecord[] = [];
  private running: Promise<void> | undefined;
  private again = false;
  private pollDue = true;
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private pollMs = 1_000;

  constructor(private readonly options: RecordRelayOptions) {
    this.batchSize = options.batchSize ?? 500;
    this.leaseSeconds = options.leaseSeconds ?? 10;
    this.maxPollMs = options.maxPollMs ?? 30_000;
  }

  /** Records committed here and not yet handed over (the backlog gauge). */
  get backlog(): number {
    return this.own.length;
  }

  /** Starts the poll for rows no relay holds. */
  start(): void {
    this.wake();
  }

  /** Records were committed by this process (leased to it by their insert): hand them over now. */
  committed(records: readonly usage.RequestRecord[]): void {
    this.own.push(...records);
    this.wake();
  }

  /** One pass at a time; a wake meanwhile runs another. */
  private wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.pass().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  private schedulePoll(): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.pollDue = true;
      this.wake();
    }, this.pollMs);
    this.timer.unref();
    this.pollMs = Math.min(this.pollMs * 2, this.maxPollMs);
  }

  private async pass(): Promise<void> {
    await this.handOverOwn();
    if (!this.pollDue) return;
    this.pollDue = false;
    try {
      while ((await this.relayClaimed()) === this.batchSize && !this.stopped);
    } catch (error) {
      this.options.logger.warn({ err: error }, "usage records not relayed yet; retrying");
      this.pollMs = 1_000;
    }
    this.schedulePoll();
  }

  /** Hands this process's committed records over in batches; a failure leaves them to the poll. */
  private async handOverOwn(): Promise<void> {
    while (this.own.length > 0) {
      const batch = this.own.splice(0, this.batchSize);
      try {
        await this.handOver(
          batch,
          batch.map((record) => record.requestId),
        );
      } catch (error) {
        // Their rows stay; their lease runs out and the poll relays them.
        this.options.logger.warn({ err: error }, "usage records not relayed yet; the poll will");
        this.pollMs = 1_000;
        this.schedulePoll();
        return;
      }
    }
  }

  /** Claims rows whose lease ran out and hands them over; answers how many. */
  private async relayClaimed(): Promise<number> {
    const { rows } = await this.options.db.query<{
      request_id: string;
      record: usage.RequestRecord;
    }>(CLAIM, [this.batchSize, this.leaseSeconds]);
    if (rows.length > 0) {
      await this.handOver(
        rows.map((row) => row.record),
        rows.map((row) => row.request_id),
      );
    }
    return rows.length;
  }

  private async handOver(records: usage.RequestRecord[], ids: string[]): Promise<void> {
    await this.options.append(records);
    await this.options.db.query(DELETE, [ids]);
  }

  /** Stops polling and hands over what this process committed (what is left, another relays). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    await this.handOverOwn();
  }
}
