import {
  createWakeTimer,
  isDependencyUnavailable,
  type Logger,
  type Pool,
  runWithTraceContext,
  sanitizeTraceCarrier,
  type TraceCarrier,
} from "@switchboard/kit";
import {
  commitTogether,
  heldCommitted,
  holdOrCommit,
  inTransaction,
  type HeldTransaction,
  type Tx,
  type Waker,
} from "./tx.js";

export interface DueAction {
  id: string;
  callId: string;
  kind: string;
  payload: Record<string, unknown>;
  /** When the timer was due: the time the event it stands for happened. */
  dueAt: Date;
  attempts: number;
  /** The trace context of the transaction that set the timer. */
  traceCarrier?: TraceCarrier;
}

export interface ActionKind {
  /** Runs in the action's own transaction, which also deletes the action. */
  run(tx: Tx, action: DueAction): Promise<void>;
  /** Runs (in a transaction of its own) when the action failed `maxAttempts` times. */
  exhausted?(tx: Tx, action: DueAction): Promise<void>;
  /**
   * `run` only defers its writes (it reads nothing back and sends nothing of its own), so its
   * transaction may travel with other calls' in one query (runTogether).
   */
  defersOnly?: boolean;
}

export interface ActionRunnerOptions {
  pool: Pool;
  logger: Logger;
  /** The polling floor: timers set by other replicas or before a restart (default 250 ms). */
  pollIntervalMs?: number;
  /** While nothing is due the floor doubles up to this (default 10 s); a wake resets it. */
  idlePollMaxMs?: number;
  /** Actions claimed at once (default 100). */
  batchSize?: number;
  /** Calls whose actions run side by side (default 4; one call's actions run in due order). */
  concurrency?: number;
  /** Tries per action before it is given up (default 5). */
  maxAttempts?: number;
  /** How long a claim keeps other replicas off an action (default 30 s). */
  leaseSeconds?: number;
}

export interface ActionRunner extends Waker {
  register(kind: string, handler: ActionKind): void;
  start(): void;
  /** Runs every due action now, until none is due (tests, recovery). */
  drainDue(): Promise<number>;
  stop(): Promise<void>;
}

interface Row {
  id: string;
  call_id: string;
  kind: string;
  payload: Record<string, unknown>;
  due_at: Date;
  attempts: number;
  trace_carrier: unknown;
}

/** What follows an action's BEGIN (runAction says why). */
const actionOpening = [
  "SET LOCAL synchronous_commit TO off",
  "SET LOCAL plan_cache_mode TO force_generic_plan",
];

/**
 * Fires the durable timers of call_control.scheduled_actions. A claim is one statement that
 * leases a batch of due actions (`FOR UPDATE SKIP LOCKED`: replicas take disjoint batches);
 * then each action runs in its own short transaction together with its deletion, so a timer's
 * effect and its removal commit together, and the lock order of every transaction here is the
 * one the API uses (call row, then seat row). Under load, the transactions of many calls'
 * actions whose handlers only defer their writes travel in one query (runTogether), each still
 * its own. A crash leaves the lease to expire and the action runs again: handlers are
 * idempotent (state changes are guarded UPDATEs). Woken in-process for timers set here, polling
 * as the floor for everything else (other replicas, the backlog after a restart).
 */
export function createActionRunner(options: ActionRunnerOptions): ActionRunner {
  const { pool, logger } = options;
  const pollIntervalMs = options.pollIntervalMs ?? 250;
  const idlePollMaxMs = Math.max(pollIntervalMs, options.idlePollMaxMs ?? 10_000);
  let floorMs = pollIntervalMs;
  const batchSize = options.batchSize ?? 100;
  const concurrency = options.concurrency ?? 4;
  const maxAttempts = options.maxAttempts ?? 5;
  const leaseSeconds = options.leaseSeconds ?? 30;
  const kinds = new Map<string, ActionKind>();
  let started = false;
  let stopping = false;
  const timer = createWakeTimer(loop);

  const runner: ActionRunner = {
    register(kind, handler) {
      kinds.set(kind, handler);
    },
    wake(atMs) {
      floorMs = pollIntervalMs;
      if (started) timer.armAt(atMs);
    },

    start() {
      started = true;
      timer.armAt(Date.now());
    },
    async drainDue() {
      let total = 0;
      for (;;) {
        const claimed = await claim();
        await runClaimed(claimed);
        total += claimed.length;
        if (claimed.length < batchSize || stopping) return total;
      }
    },
    async stop() {
      stopping = true;
      await timer.stop();
    },
  };

  async function loop(again: () => boolean) {
    let ran = 0;
    do {
      try {
        ran += await runner.drainDue();
      } catch (error) {
        logger.warn({ err: error }, "call timers: claim failed; will retry");
      }
    } while (again() && !stopping);
    if (stopping) return;
    // Nothing due: the floor backs off (timers set here wake the runner at their own time).
    floorMs = ran > 0 ? pollIntervalMs : Math.min(floorMs * 2, idlePollMaxMs);
    const next = await nextDue().catch(() => undefined);
    const floor = Date.now() + floorMs;
    timer.armAt(next === undefined ? floor : Math.max(Date.now(), Math.min(floor, next)));
  }

  async function nextDue(): Promise<number | undefined> {
    const { rows } = await pool.query<{ due_at: Date | null }>(
      `SELECT min(due_at) AS due_at FROM call_control.scheduled_actions
        WHERE locked_until IS NULL OR locked_until <= now()`,
    );
    return rows[0]?.due_at?.getTime();
  }

  async function claim(): Promise<DueAction[]> {
    const { rows } = await pool.query<Row>(
      `UPDATE call_control.scheduled_actions a
          SET locked_until = now() + make_interval(secs => $2)
        WHERE a.id IN (
          SELECT id FROM call_control.scheduled_actions
           WHERE due_at <= now() AND (locked_until IS NULL OR locked_until <= now())
           ORDER BY due_at, id
           LIMIT $1
           FOR UPDATE SKIP LOCKED)
       RETURNING a.id::text AS id, a.call_id, a.kind, a.payload, a.due_at, a.attempts,
                 a.trace_carrier`,
      [batchSize, leaseSeconds],
    );
    return rows
      .map((row) => ({
        id: row.id,
        callId: row.call_id,
        kind: row.kind,
        payload: row.payload,
        dueAt: row.due_at,
        attempts: row.attempts,
        traceCarrier: sanitizeTraceCarrier(row.trace_carrier),
      }))
      .sort((a, b) => a.dueAt.getTime() - b.dueAt.getTime() || Number(a.id) - Number(b.id));
  }

  /**
   * One call's actions in due order. The calls whose every action here only defers its writes
   * go first, in waves: the first due action of each, then the second… A wave (one action per
   * call) is dealt out in `concurrency` shares, each one query (runTogether). The other calls
   * then run side by side, `concurrency` at a time, each action on a connection of its own.
   */
  async function runClaimed(actions: DueAction[]) {
    const byCall = new Map<string, DueAction[]>();
    for (const action of actions) {
      byCall.set(action.callId, [...(byCall.get(action.callId) ?? []), action]);
    }
    const defersOnly = (queue: DueAction[]) =>
      queue.every((action) => kinds.get(action.kind)?.defersOnly === true);
    const queues = [...byCall.values()];
    const together = queues.filter(defersOnly);
    const alone = queues.filter((queue) => !defersOnly(queue));
    for (;;) {
      const wave = together.flatMap((queue) => queue.splice(0, 1));
      if (wave.length === 0) break;
      const size = Math.ceil(wave.length / concurrency);
      const shares = Array.from({ length: Math.ceil(wave.length / size) }, (_, i) =>
        wave.slice(i * size, (i + 1) * size),
      );
      await Promise.all(shares.map(runTogether));
    }
    const worker = async () => {
      for (let queue = alone.shift(); queue; queue = alone.shift()) {
        for (const action of queue) await runOne(action);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, alone.length) }, worker));
  }

  /**
   * Actions of distinct calls on one connection, each in its own transaction as runOne runs it,
   * the transactions sent together in ONE simple query (commitTogether): one round trip for the
   * share. A handler that sends a statement after all has its transaction committed at once.
   * Where the query fails, those whose timers are gone committed; the others run again one by one.
   */
  async function runTogether(actions: DueAction[]) {
    if (actions.length === 1) return runOne(actions[0]!);
    const client = await pool.connect().catch(() => undefined);
    if (!client) {
      for (const action of actions) await runOne(action);
      return;
    }
    const held: { action: DueAction; transaction: HeldTransaction }[] = [];
    let lost: Error | undefined;
    let left: DueAction[] = [];
    for (const [index, action] of actions.entries()) {
      const handler = kinds.get(action.kind);
      try {
        const transaction = await runWithTraceContext(action.traceCarrier, spanOf(action), () =>
          holdOrCommit(client, runner, (tx) => actionWork(tx, action, handler), {
            opening: actionOpening,
          }),
        );
        if (transaction) held.push({ action, transaction });
      } catch (error) {
        if (isDependencyUnavailable(error)) {
          // The connection failed: what it held never went out; the rest runs one by one.
          lost = error as Error;
          left = actions.slice(index);
          break;
        }
        await recordFailure(action, handler, error);
      }
    }
    if (lost) {
      for (const { transaction } of held) transaction.tx.abandon();
      left = [...held.splice(0).map((h) => h.action), ...left];
    }
    try {
      if (held.length > 0)
        await commitTogether(
          client,
          runner,
          held.map((h) => h.transaction),
        );
    } catch (error) {
      if (isDependencyUnavailable(error)) lost = error as Error;
      left = await notCommitted(held);
    }
    client.release(lost);
    for (const action of left) await runOne(action);
  }

  /**
   * After a query of held transactions failed: tells those that committed (their timers are
   * gone), and answers the others' actions, to run again. If that cannot be learned, all of
   * them: their handlers are idempotent.
   */
  async function notCommitted(
    held: { action: DueAction; transaction: HeldTransaction }[],
  ): Promise<DueAction[]> {
    const actions = held.map((h) => h.action);
    const remaining = await pool
      .query<{ id: string }>(
        "SELECT id::text AS id FROM call_control.scheduled_actions WHERE id = ANY($1::bigint[])",
        [actions.map((action) => action.id)],
      )
      .then(({ rows }) => new Set(rows.map((row) => row.id)))
      .catch(() => undefined);
    if (!remaining) return actions;
    for (const { action, transaction } of held) {
      if (!remaining.has(action.id)) heldCommitted(transaction, runner);
    }
    return actions.filter((action) => remaining.has(action.id));
  }

  /**
   * One try of an action, in a `process call timers` span that continues the trace of the
   * transaction that set the timer, whichever wake or replica runs it.
   */
  async function runOne(action: DueAction) {
    const handler = kinds.get(action.kind);
    try {
      await runWithTraceContext(action.traceCarrier, spanOf(action), () =>
        runAction(action, handler),
      );
    } catch (error) {
      await recordFailure(action, handler, error);
    }
  }

  const spanOf = (action: DueAction) => ({
    queue: "call timers",
    jobName: action.kind,
    jobId: action.id,
    attempt: action.attempts + 1,
    link: false,
  });

  const recordFailure = (action: DueAction, handler: ActionKind | undefined, error: unknown) =>
    failed(action, handler, error).catch((cause: unknown) =>
      logger.error(
        { err: cause, callId: action.callId },
        "call timers: could not record a failure",
      ),
    );

  /**
   * One action, one transaction: its effect and its deletion commit together. Losing the last
   * commits to a database crash only makes the timer fire again (handlers are idempotent), so
   * this path does not wait for the WAL flush (SET LOCAL synchronous_commit, sent with the
   * BEGIN). The deletion travels with the COMMIT and the handler's deferred writes. The
   * transaction's statements with parameters — the steps' prepared statements (folded-steps.ts)
   * and any a handler sends — run on their generic plan: each names its call or timer by key,
   * so a plan made for the parameters' values would be the same plan, made anew.
   */
  async function runAction(action: DueAction, handler: ActionKind | undefined) {
    await inTransaction(pool, runner, (tx) => actionWork(tx, action, handler), {
      opening: actionOpening,
    });
  }

  /** An action's transaction: its handler, then its deletion (with the COMMIT). */
  async function actionWork(tx: Tx, action: DueAction, handler: ActionKind | undefined) {
    if (handler) await handler.run(tx, action);
    else logger.error({ kind: action.kind }, "call timers: no handler; action dropped");
    tx.defer("DELETE FROM call_control.scheduled_actions WHERE id = $1", [action.id], {
      prepared: true,
    });
  }

  async function failed(action: DueAction, handler: ActionKind | undefined, error: unknown) {
    const attempts = action.attempts + 1;
    if (attempts < maxAttempts) {
      logger.warn(
        { err: error, kind: action.kind, callId: action.callId, attempts },
        "call timer failed",
      );
      await pool.query(
        `UPDATE call_control.scheduled_actions
            SET attempts = $2, locked_until = NULL,
                due_at = now() + make_interval(secs => $3::float8)
          WHERE id = $1`,
        [action.id, attempts, Math.min(0.1 * 2 ** attempts, 30)],
      );
      return;
    }
    logger.error({ err: error, kind: action.kind, callId: action.callId }, "call timer given up");
    const remove = (db: Pick<Pool, "query">) =>
      db.query("DELETE FROM call_control.scheduled_actions WHERE id = $1", [action.id]);
    try {
      await inTransaction(pool, runner, async (tx) => {
        await handler?.exhausted?.(tx, action);
        await remove(tx.client);
      });
    } catch (cause) {
      logger.error({ err: cause, callId: action.callId }, "call timers: exhausted handler failed");
      await remove(pool);
    }
  }

  return runner;
}
