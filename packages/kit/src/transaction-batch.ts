import { once } from "node:events";
import type pg from "pg";
import { isDependencyUnavailable } from "./dependency-failure.js";
import { outboxWritesCommitted, outboxWritesRolledBack } from "./events/outbox-signal.js";
import { holdOpening } from "./held-opening.js";

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

  const flush = async () => {
    timer = undefined;
    // A batch in flight starts the next one when it ends.
    if (running >= concurrency || pending.length === 0) return;
    running += 1;
    const batch = pending;
    pending = [];
    try {
      const outcomes = await runBatch(options.pool, batch);
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

const SAVEPOINT = "SAVEPOINT batched";
const RELEASE = "RELEASE SAVEPOINT batched";
const UNDO = "ROLLBACK TO SAVEPOINT batched";

/**
 * One transaction of a batch's pieces, each under the savepoint `batched` (a lone piece needs
 * none: its failure is the transaction's); each piece's outcome. What goes between the pieces
 * (BEGIN, the savepoints, an undo) is held back to travel with the next piece's first
 * statement (holdOpening), and what follows the last one with the COMMIT: a batch of n pieces
 * of one statement each is n + 1 round trips. A piece that throws, or that caught a failed
 * statement's error and went on (the connection reports the transaction failed), is rolled back
 * to its savepoint and fails alone.
 */
async function runBatch(pool: pg.Pool, batch: Pending[]): Promise<Outcome[]> {
  const client = await pool.connect();
  const lone = batch.length === 1;
  /** What goes out with the next statement: the BEGIN, a piece's undo, the next savepoint. */
  let held = lone ? ["BEGIN"] : ["BEGIN", SAVEPOINT];
  let begun = false;
  const outcomes: Outcome[] = [];
  try {
    for (const piece of batch) {
      const opening = holdOpening(client, held);
      let outcome: Outcome;
      try {
        outcome = { ok: true, result: await piece.work(client) };
      } catch (error) {
        outcome = { ok: false, error };
      }
      // A piece that sent nothing leaves what was held to the next one.
      const sent = opening.take() === undefined;
      if (sent && outcome.ok && (await settledStatus(client)) === "E") {
        outcome = { ok: false, error: new Error(FAILED_WITHOUT_THROWING) };
      }
      outcomes.push(outcome);
      if (!sent) continue;
      begun = true;
      held = outcome.ok ? [RELEASE, SAVEPOINT] : [UNDO];
    }
    if (!begun) {
      client.release();
      return outcomes;
    }
    const undone = held[0] === UNDO;
    if (lone && undone) {
      await client.query("ROLLBACK");
      outboxWritesRolledBack(client);
      client.release();
      return outcomes;
    }
    const results: unknown = await client.query(undone ? `${UNDO};\nCOMMIT` : "COMMIT");
    const commit = (Array.isArray(results) ? results.at(-1) : results) as pg.QueryResult;
    if (commit.command === "ROLLBACK") throw new Error(FAILED_WITHOUT_THROWING);
    outboxWritesCommitted(client);
    client.release();
    return outcomes;
  } catch (error) {
    outboxWritesRolledBack(client);
    if (begun) await client.query("ROLLBACK").catch(() => undefined);
    // A connection that failed (lost, or a statement past its deadline) is not reused.
    client.release(isDependencyUnavailable(error) ? (error as Error) : undefined);
    throw error;
  }
}

/**
 * The connection's transaction status once the server has answered all that was sent: pg hands
 * a failed statement's error to its caller on the ErrorResponse, and learns the status from
 * the ReadyForQuery after it, which may arrive in a later read from the socket.
 */
async function settledStatus(client: pg.PoolClient): Promise<string | null> {
  if ((client as unknown as { readyForQuery?: boolean }).readyForQuery === false) {
    const done = new AbortController();
    await Promise.race([
      once(client, "drain", { signal: done.signal }),
      once(client, "end", { signal: done.signal }),
    ]).finally(() => done.abort());
  }
  return client.getTransactionStatus();
}

const FAILED_WITHOUT_THROWING = "the transaction was rolled back: a statement in it failed";
