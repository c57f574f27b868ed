import { createHash } from "node:crypto";
import type { Logger, Queryable } from "@switchboard/kit";

/** From this many consecutive failures a client id is locked. */
export const LOCKOUT_THRESHOLD = 5;
/** The first lock; it doubles with each further failure, up to the cap. */
const FIRST_LOCK_SECONDS = 1;
export const MAX_LOCK_SECONDS = 15 * 60;
/** Failures further apart than this start counting again. */
const FAILURE_WINDOW_SECONDS = 15 * 60;
/** Every this many failures counted by a gateway, it purges rows that mean nothing any more. */
const PURGE_EVERY_FAILURES = 500;
const PURGE_BATCH = 1_000;

export interface ClientLockoutOptions {
  /** Failures counted between purges (default 500). */
  purgeEvery?: number;
  logger?: Logger | undefined;
}

export interface LockoutState {
  /** Seconds until the id may be tried again; 0 when it is not locked. */
  lockedForSeconds: number;
  /** A failure is on record (a success then clears it). */
  hasFailures: boolean;
}

/** The row of one (client id, source): a NUL cannot occur in either (the endpoint refuses it). */
const keyOf = (clientId: string, source: string) =>
  createHash("sha256").update(clientId).update("\u0000").update(source).digest();

/**
 * The failure counter per presented client id and source address, in PostgreSQL so that every
 * gateway replica counts the same guesses (see migrations/…_client-lockouts.sql). Client ids are
 * not secret: counted per id alone, anyone could lock a client out by guessing at it; counted
 * per (id, source), a guesser locks only itself, and the right secret from elsewhere works.
 */
export class ClientLockout {
  private failuresSincePurge = 0;
  private purging = false;

  constructor(
    private readonly db: Queryable,
    private readonly options: ClientLockoutOptions = {},
  ) {}

  async state(clientId: string, source: string): Promise<LockoutState> {
    const { rows } = await this.db.query<{ locked_for: number }>(
      `SELECT greatest(0, coalesce(extract(epoch FROM locked_until - now()), 0))::float8 AS locked_for
         FROM gateway.client_lockouts WHERE client_key = $1`,
      [keyOf(clientId, source)],
    );
    const row = rows[0];
    return {
      lockedForSeconds: row ? Math.ceil(row.locked_for) : 0,
      hasFailures: row !== undefined,
    };
  }

  /** Counts a failure; from the threshold on, locks the id for the source (backoff, capped). */
  async failed(clientId: string, source: string): Promise<void> {
    await this.db.query(
      `INSERT INTO gateway.client_lockouts AS l (client_key, failures, last_failure_at)
       VALUES ($1, 1, now())
       ON CONFLICT (client_key) DO UPDATE SET
         failures = CASE WHEN l.last_failure_at < now() - $2 * interval '1 second'
                         THEN 1 ELSE l.failures + 1 END,
         last_failure_at = now(),
         locked_until = CASE
           WHEN l.last_failure_at < now() - $2 * interval '1 second' OR l.failures + 1 < $3 THEN NULL
           ELSE now() + least($5::float8, $4 * power(2, l.failures + 1 - $3)) * interval '1 second'
         END`,
      [
        keyOf(clientId, source),
        FAILURE_WINDOW_SECONDS,
        LOCKOUT_THRESHOLD,
        FIRST_LOCK_SECONDS,
        MAX_LOCK_SECONDS,
      ],
    );
    this.failuresSincePurge += 1;
    if (this.failuresSincePurge >= (this.options.purgeEvery ?? PURGE_EVERY_FAILURES)) {
      this.failuresSincePurge = 0;
      this.purgeInBackground();
    }
  }

  /**
   * Deletes up to `batch` rows whose last failure is older than the counting window and whose
   * lock has run out: such a row locks nothing and the next failure would start again at 1, so
   * it means what no row means. Unknown ids are counted too, so without this, guesses at
   * made-up ids would grow the table without end. Returns how many went.
   */
  async purge(batch = PURGE_BATCH): Promise<number> {
    const { rowCount } = await this.db.query(
      `DELETE FROM gateway.client_lockouts WHERE client_key IN (
         SELECT client_key FROM gateway.client_lockouts
          WHERE last_failure_at < now() - $1 * interval '1 second'
            AND (locked_until IS NULL OR locked_until <= now())
          LIMIT $2)`,
      [FAILURE_WINDOW_SECONDS, batch],
    );
    return rowCount ?? 0;
  }

  /** Housekeeping off the request's path: one purge at a time, batches until none are left. */
  private purgeInBackground(): void {
    if (this.purging) return;
    this.purging = true;
    void (async () => {
      try {
        let purged = 0;
        for (let deleted = PURGE_BATCH; deleted === PURGE_BATCH; purged += deleted) {
          deleted = await this.purge();
        }
        if (purged > 0) this.options.logger?.debug({ purged }, "purged stale client lockouts");
      } catch (error) {
        this.options.logger?.warn({ err: error }, "client lockout purge failed");
      } finally {
        this.purging = false;
      }
    })();
  }

  async succeeded(clientId: string, source: string): Promise<void> {
    await this.db.query("DELETE FROM gateway.client_lockouts WHERE client_key = $1", [
      keyOf(clientId, source),
    ]);
  }
}
