import type pg from "pg";
import { withTransaction } from "./db.js";

/** Work on a transaction shared with others' (see batchTransactions). */
export type BatchedWork<R> = (client: pg.PoolClient) => Promise<R>;

interface Pending {
  work: BatchedWork<unknown>;
  resolve(result: unknown): void;
  reject(error: unknown): void;
}

type Outcome = { ok: true; result: unknown } | { ok: false; error: unknown };

/**
 * Group commit: the work submitted within `lingerMs` runs in one transaction, one piece after
 * the other, each under its own savepoint, so one commit carries them all. A piece that throws
 * is rolled back to its savepoint and its caller gets the error; the others still commit.
 * Every caller is answered after the COMMIT (or gets its error), never before: what resolves is
 * durable, as with a transaction of its own. At most `concurrency` batches run at once (what
 * arrives meanwhile waits for the next). With one, batched work never waits on another batch's
 * locks: no deadlock among the pieces, whatever rows they lock in whatever order. With more,
 * pieces of different batches should lock disjoint rows: two batches that lock the same rows
 * in opposite orders deadlock until PostgreSQL fails a piece (deadlock_timeout). A piece must
 * not itself wait for work submitted here (it would wait for the batch after its own).
 */
export function batchTransactions(options: {
  pool: pg.Pool;
  lingerMs: number;
  /** Batches in flight at once (default 1). */
  concurrency?: number;
}): <R>(work: BatchedWork<R>) => Promise<R> {
  const concurrency = Math.max(1, options.concurrency ?? 1);
  let pending: Pending[] = [];
  let timer: NodeJS.Timeout | undefined;
  let running = 0;

  /**
   * The pieces of a batch, each under the savepoint `batched`: the release of one piece's
   * savepoint and the next one's go in one round trip. A piece that left the transaction failed
   * without throwing fails at that release, and is undone as if it had thrown. A lone piece needs
   * no savepoint: its failure is the transaction's.
   */
  const runPieces = async (client: pg.PoolClient, batch: Pending[]): Promise<Outcome[]> => {
    if (batch.length === 1) return [{ ok: true, result: await batch[0]!.work(client) }];
    const done: Outcome[] = [];
    /** Undoes the last piece run: it left the transaction failed without throwing. */
    const undoLast = async (error: unknown) => {
      await client.query("ROLLBACK TO SAVEPOINT batched");
      done[done.length - 1] = { ok: false, error };
    };
    for (const [index, piece] of batch.entries()) {
      if (index === 0) await client.query("SAVEPOINT batched");
      else await client.query("RELEASE SAVEPOINT batched; SAVEPOINT batched").catch(undoLast);
      try {
        done.push({ ok: true, result: await piece.work(client) });
      } catch (error) {
        done.push({ ok: false, error });
        await client.query("ROLLBACK TO SAVEPOINT batched");
      }
    }
    await client.query("RELEASE SAVEPOINT batched").catch(undoLast);
    return done;
  };

  const flush = async () => {
    timer = undefined;
    // A batch in flight starts the next one when it ends.
    if (running >= concurrency || pending.length === 0) return;
    running += 1;
    const batch = pending;
    pending = [];
    try {
      const outcomes = await withTransaction(options.pool, (client) => runPieces(client, batch));
      outcomes.forEach((outcome, i) => {
        const piece = batch[i];
        if (outcome.ok) piece?.resolve(outcome.result);
        else piece?.reject(outcome.error);
      });
    } catch (error) {
      for (const piece of batch) piece.reject(error);
    } finally {
      running -= 1;
      if (pending.length > 0 && !timer) void flush();
    }
  };

  return <R>(work: BatchedWork<R>) =>
    new Promise<R>((resolve, reject) => {
      pending.push({ work, resolve: resolve as (result: unknown) => void, reject });
      timer ??= setTimeout(() => void flush(), options.lingerMs);
    });
}
