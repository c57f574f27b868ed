import {
  holdOpening,
  injectTraceContext,
  isDependencyUnavailable,
  outboxWritesCommitted,
  outboxWritesRolledBack,
  simpleStatement,
  takeOutboxWrites,
  wakeOutboxRelays,
  type HeldOpening,
  type Pool,
  type PoolClient,
  type SimpleStatement,
} from "@switchboard/kit";

/** A timer to set: `kind` names its handler; it fires at `at`, or `delayMs` from now. */
export interface NewAction {
  callId: string;
  kind: string;
  payload?: Record<string, unknown>;
  delayMs?: number;
  at?: Date;
}

/**
 * The trace context a timer set now carries (JSON for its `trace_carrier` column), or null
 * when no trace is active: the work the timer stands for continues the trace that set it.
 */
export function timerTraceCarrier(): string | null {
  const carrier = injectTraceContext();
  return carrier ? JSON.stringify(carrier) : null;
}

/**
 * Timers to set as the rows of a `VALUES` list (call_id, kind, payload, due_at, trace_carrier),
 * for a statement that inserts them itself (e.g. one CTE of a folded step); `param` adds each
 * value to that statement and returns its placeholder.
 */
export function timerValuesSql(actions: NewAction[], param: (value: unknown) => string): string {
  const trace = param(timerTraceCarrier());
  const rows = actions.map(
    (action) =>
      `(${param(action.callId)}, ${param(action.kind)}, ${param(JSON.stringify(action.payload ?? {}))}::jsonb,
        COALESCE(${param(action.at?.toISOString() ?? null)}::timestamptz,
                 now() + make_interval(secs => ${param(action.delayMs ?? 0)}::float8 / 1000)),
        ${trace}::jsonb)`,
  );
  return `VALUES ${rows.join(", ")}`;
}

/** Something that wants to hear when a newly committed timer falls due (the action runner). */
export interface Waker {
  wake(atMs: number): void;
}

/**
 * One transaction of the call engine: the client, plus the durable timers it sets. Timers are
 * rows in call_control.scheduled_actions written in the same transaction as the state change
 * that needs them, so a committed state always has its timers and a rolled-back one has none.
 * After commit the local runner is woken for the earliest of them (other replicas poll).
 *
 * Writes whose answer nobody waits for (timers set and dropped, events appended, counters) are
 * `defer`red: they travel with the transaction's COMMIT, in one round trip, in the order they
 * were made, after every statement sent directly on `client`. The BEGIN travels with the first
 * statement (`beginWith`), so a transaction of one statement and deferred writes is two round
 * trips, and one of deferred writes only is one.
 */
export class Tx {
  private readonly wakes: number[] = [];
  private readonly commitHooks: (() => void)[] = [];
  private readonly deferred: string[] = [];
  /** The deferred writes, told how their COMMIT went (simpleStatement). */
  private readonly prepared: SimpleStatement[] = [];
  private opening: HeldOpening | undefined;

  constructor(readonly client: PoolClient) {}

  /**
   * Holds `opening` (the BEGIN and what goes with it) back until the transaction's first
   * statement and sends them together (the kit's holdOpening).
   */
  beginWith(opening: readonly string[]): void {
    this.opening = holdOpening(this.client, opening);
  }

  /** The opening not sent yet (now taken: it never will be), if any. */
  takeOpening(): string | undefined {
    return this.opening?.take();
  }

  /**
   * Sends `text` with the transaction's COMMIT (the caller needs no answer from it), as an
   * `EXECUTE` of the connection's prepared statement once the pool sends it often (the kit's
   * simpleStatement), planned once instead of on every send; `prepared`: from its first send (a
   * statement of a fixed text known to be hot).
   */
  defer(text: string, values: readonly unknown[] = [], options: { prepared?: boolean } = {}): void {
    const statement = simpleStatement(this.client, text, values, { hot: options.prepared });
    this.prepared.push(statement);
    this.deferred.push(statement.sql);
  }

  /** Tells the deferred writes how the simple query that carried them went. */
  settle(error?: unknown): void {
    for (const statement of this.prepared.splice(0)) statement.settle(error);
  }

  /** Tells the deferred writes not sent yet that they never will be (the work gave up). */
  abandon(): void {
    for (const statement of this.prepared.splice(0)) statement.abandon();
  }

  /** Whether writes were deferred that have not gone out yet. */
  get hasDeferredWrites(): boolean {
    return this.deferred.length > 0;
  }

  /**
   * The deferred writes followed by `last` (the COMMIT), as one simple query — after the
   * opening, where no statement carried it yet.
   */
  closing(last: string): string {
    const held = this.takeOpening();
    return [...(held ? [held] : []), ...this.deferred.splice(0), last].join(";\n");
  }

  async schedule(...actions: NewAction[]): Promise<void> {
    this.scheduleWhere(undefined, actions);
  }

  /**
   * Sets `actions` (with the COMMIT) only where `guard.where` holds — an SQL condition that may
   * read `guard.with`, a CTE (`name AS (statement)`, e.g. a data-modifying one) sent alongside.
   */
  scheduleWhere(guard: { with: string; where: string } | undefined, actions: NewAction[]): void {
    if (actions.length === 0) {
      if (guard) this.defer(`WITH ${guard.with} SELECT 1`);
      return;
    }
    const traceCarrier = timerTraceCarrier();
    const values: unknown[] = [traceCarrier];
    const tuples = actions.map((action, index) => {
      const base = 1 + index * 5;
      values.push(
        action.callId,
        action.kind,
        JSON.stringify(action.payload ?? {}),
        action.at?.toISOString() ?? null,
        action.delayMs ?? 0,
      );
      this.wakes.push(action.at ? action.at.getTime() : Date.now() + (action.delayMs ?? 0));
      return `($${base + 1}, $${base + 2}, $${base + 3}::jsonb,
        COALESCE($${base + 4}::timestamptz, now() + make_interval(secs => $${base + 5}::float8 / 1000)),
        $1::jsonb)`;
    });
    const rows = `VALUES ${tuples.join(", ")}`;
    this.defer(
      guard
        ? `WITH ${guard.with}
           INSERT INTO call_control.scheduled_actions (call_id, kind, payload, due_at, trace_carrier)
           SELECT * FROM (${rows}) AS t WHERE ${guard.where}`
        : `INSERT INTO call_control.scheduled_actions (call_id, kind, payload, due_at, trace_carrier)
           ${rows}`,
      values,
    );
  }

  /** Drops a call's pending timers of the given kinds (e.g. when the call ended). */
  async cancel(callId: string, kinds: readonly string[]): Promise<void> {
    this.defer(
      `DELETE FROM call_control.scheduled_actions WHERE call_id = $1 AND kind = ANY($2::text[])`,
      [callId, kinds],
    );
  }

  /** Records a timer set by the caller's own SQL, so the runner is woken for it after commit. */
  wakeAt(atMs: number): void {
    this.wakes.push(atMs);
  }

  /** The due times of the timers set in this transaction. */
  get wakeTimes(): readonly number[] {
    return this.wakes;
  }

  /**
   * Runs `hook` once this transaction committed (never after a rollback): what must not
   * happen before the state it belongs to is durable, e.g. a packet to the network. A hook
   * that throws is the hook's problem: it must not throw.
   */
  afterCommit(hook: () => void): void {
    this.commitHooks.push(hook);
  }

  /** Wakes `waker` for the earliest timer this (committed) transaction set; runs the hooks. */
  committed(waker: Waker): void {
    const earliest = Math.min(...this.wakes);
    if (Number.isFinite(earliest)) waker.wake(earliest);
    for (const hook of this.commitHooks.splice(0)) hook();
  }
}

/**
 * Runs `work` in one transaction (its deferred writes sent with the COMMIT) and, once it
 * committed, wakes `waker` for its timers. `opening`: statements to follow the BEGIN (e.g. SET LOCAL). On
 * any error it rolls back and rethrows.
 */
export async function inTransaction<T>(
  pool: Pool,
  waker: Waker,
  work: (tx: Tx) => Promise<T>,
  options: { opening?: readonly string[] } = {},
): Promise<T> {
  const client = await pool.connect();
  const tx = new Tx(client);
  tx.beginWith(["BEGIN", ...(options.opening ?? [])]);
  let result: T;
  try {
    result = await work(tx);
    await commit(tx);
    outboxWritesCommitted(client);
  } catch (error) {
    // Nothing to roll back where the BEGIN never went out (the work threw first).
    const begun = tx.takeOpening() === undefined;
    return failed(tx, error, { rollBack: begun });
  }
  return succeeded(tx, waker, result);
}

/**
 * Runs `work`, whose writes are ONE statement on `tx.client` (atomic on its own: no BEGIN, no
 * COMMIT, one round trip) and, once it succeeded, wakes `waker` for the timers it noted
 * (`wakeAt`) and the relays of the outboxes it appended to. Deferred writes have no COMMIT to
 * travel with here: `work` must make none.
 */
export async function inOneStatement<T>(
  pool: Pool,
  waker: Waker,
  work: (tx: Tx) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  const tx = new Tx(client);
  let result: T;
  try {
    result = await work(tx);
    if (tx.hasDeferredWrites) throw new Error("inOneStatement: the work deferred writes");
    outboxWritesCommitted(client);
  } catch (error) {
    return failed(tx, error, { rollBack: false });
  }
  return succeeded(tx, waker, result);
}

/**
 * A transaction whose work sent nothing of its own, held back whole (its BEGIN, its deferred
 * writes and its COMMIT) to travel in one simple query with others: commitTogether.
 */
export interface HeldTransaction {
  readonly tx: Tx;
  readonly text: string;
  /** The outboxes it appended to: their relays are woken once it committed. */
  readonly outbox: ReadonlySet<string>;
}

/**
 * inTransaction's work on `client`, a connection the caller holds and releases: where the work
 * sent nothing of its own, its transaction is held back and returned (commitTogether sends
 * it); where it sent statements, it is committed here (undefined). Work that fails is rolled
 * back where a statement went out, and its error rethrown.
 */
export async function holdOrCommit(
  client: PoolClient,
  waker: Waker,
  work: (tx: Tx) => Promise<void>,
  options: { opening?: readonly string[] } = {},
): Promise<HeldTransaction | undefined> {
  const tx = new Tx(client);
  tx.beginWith(["BEGIN", ...(options.opening ?? [])]);
  let opening: string | undefined;
  try {
    await work(tx);
    opening = tx.takeOpening();
    if (opening === undefined) await commit(tx);
  } catch (error) {
    await undo(tx, { rollBack: tx.takeOpening() === undefined });
    throw error;
  }
  if (opening !== undefined) {
    return { tx, text: `${opening};\n${tx.closing("COMMIT")}`, outbox: takeOutboxWrites(client) };
  }
  outboxWritesCommitted(client);
  tx.committed(waker);
  return undefined;
}

/**
 * Sends held transactions in ONE simple query on `client`, each still a transaction of its own
 * (BEGIN … COMMIT); once all committed, each wakes `waker` and its outboxes' relays. A failure
 * stops the query where it happened: the transactions before it committed, it and those after
 * it did not. Then the connection's failed transaction is rolled back and the error rethrown:
 * the caller learns which committed (from what they wrote) and tells those (heldCommitted).
 */
export async function commitTogether(
  client: PoolClient,
  waker: Waker,
  held: readonly HeldTransaction[],
): Promise<void> {
  try {
    await client.query(held.map((transaction) => transaction.text).join(";\n"));
  } catch (error) {
    for (const { tx } of held) tx.settle(error);
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  }
  for (const transaction of held) {
    transaction.tx.settle();
    heldCommitted(transaction, waker);
  }
}

/** A held transaction committed: wakes `waker` for its timers and its outboxes' relays. */
export function heldCommitted(transaction: HeldTransaction, waker: Waker): void {
  wakeOutboxRelays(transaction.outbox);
  transaction.tx.committed(waker);
}

/** Sends the transaction's deferred writes with its COMMIT; tells them how it went. */
async function commit(tx: Tx): Promise<void> {
  await tx.client.query(tx.closing("COMMIT")).then(
    () => tx.settle(),
    (error: unknown) => {
      tx.settle(error);
      throw error;
    },
  );
}

/** The end of work whose writes are durable: the connection back, the waker and hooks told. */
function succeeded<T>(tx: Tx, waker: Waker, result: T): T {
  tx.client.release();
  tx.committed(waker);
  return result;
}

/** The end of work that failed: the work undone, the connection released, `error` rethrown. */
async function failed(tx: Tx, error: unknown, options: { rollBack: boolean }): Promise<never> {
  await undo(tx, options);
  // A connection that failed (lost, or a statement past its deadline) is not reused.
  tx.client.release(isDependencyUnavailable(error) ? (error as Error) : undefined);
  throw error;
}

/**
 * Undoes failed work: its deferred writes abandoned, its outbox writes forgotten, the
 * transaction rolled back where one is open.
 */
async function undo(tx: Tx, options: { rollBack: boolean }): Promise<void> {
  tx.abandon();
  outboxWritesRolledBack(tx.client);
  if (options.rollBack) await tx.client.query("ROLLBACK").catch(() => undefined);
}
