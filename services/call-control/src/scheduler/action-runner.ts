import {
  type Logger,
  type Pool,
  runWithTraceContext,
  sanitizeTraceCarrier,
  type TraceCarrier,
} from "@switchboard/kit";
import { inTransaction, type Tx, type Waker } from "./tx.js";

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

/**
 * Fires the durable timers of call_control.scheduled_actions. A claim is one statement that
 * leases a batch of due actions (`FOR UPDATE SKIP LOCKED`: replicas take disjoint batches);
 * then each action runs in its own short transaction together with its deletion, so a timer's
 * effect and its removal commit together, and the lock order of every transaction here is the
 * one the API uses (call row, then seat row). A crash leaves the lease to expire and the action
 * runs again: handlers are idempotent (state changes are guarded UPDATEs). Woken in-process for
 * timers set here, polling as the floor for everything else (other replicas, the backlog
 * after a restart).
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
  let timer: NodeJS.Timeout | undefined;
  let timerAt = Infinity;
  let running: Promise<void> | undefined;
  let again = false;

  const runner: ActionRunner = {
    register(kind, handler) {
      kinds.set(kind, handler);
    },
    wake(atMs) {
      floorMs = pollIntervalMs;
      if (!started || stopping || atMs >= timerAt) return;
      arm(atMs);
    },

    start() {
      started = true;
      arm(Date.now());
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
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running;
    },
  };

  function arm(atMs: number) {
    if (timer) clearTimeout(timer);
    timerAt = atMs;
    timer = setTimeout(tick, Math.max(0, atMs - Date.now()));
  }

  function tick() {
    timer = undefined;
    timerAt = Infinity;
    if (stopping) return;
    if (running) {
      again = true;
      return;
    }
    running = loop().finally(() => {
      running = undefined;
    });
  }

  async function loop() {
    let ran = 0;
    do {
      again = false;
      try {
        ran += await runner.drainDue();
      } catch (error) {
        logger.warn({ err: error }, "call timers: claim failed; will retry");
      }
    } while (again && !stopping);
    if (stopping) return;
    // Nothing due: the floor backs off (timers set here wake the runner at their own time).
    floorMs = ran > 0 ? pollIntervalMs : Math.min(floorMs * 2, idlePollMaxMs);
    const next = await nextDue().catch(() => undefined);
    const floor = Date.now() + floorMs;
    const at = next === undefined ? floor : Math.max(Date.now(), Math.min(floor, next));
    if (at < timerAt) arm(at);
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

  /** One call's actions in due order; calls side by side, `concurrency` at a time. */
  async function runClaimed(actions: DueAction[]) {
    const byCall = new Map<string, DueAction[]>();
    for (const action of actions) {
      byCall.set(action.callId, [...(byCall.get(action.callId) ?? []), action]);
    }
    const queues = [...byCall.values()];
    const worker = async () => {
      for (let queue = queues.shift(); queue; queue = queues.shift()) {
        for (const action of queue) await runOne(action);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, queues.length) }, worker));
  }

  /**
   * One try of an action, in a `process call timers` span that continues the trace of the
   * transaction that set the timer, whichever wake or replica runs it.
   */
  async function runOne(action: DueAction) {
    const handler = kinds.get(action.kind);
    const job = {
      queue: "call timers",
      jobName: action.kind,
      jobId: action.id,
      attempt: action.attempts + 1,
      link: false,
    };
    try {
      await runWithTraceContext(action.traceCarrier, job, () => runAction(action, handler));
    } catch (error) {
      await failed(action, handler, error).catch((cause: unknown) =>
        logger.error(
          { err: cause, callId: action.callId },
          "call timers: could not record a failure",
        ),
      );
    }
  }

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
    await inTransaction(
      pool,
      runner,
      async (tx) => {
        if (handler) await handler.run(tx, action);
        else logger.error({ kind: action.kind }, "call timers: no handler; action dropped");
        tx.defer("DELETE FROM call_control.scheduled_actions WHERE id = $1", [action.id], {
          prepared: true,
        });
      },
      {
        opening: [
          "SET LOCAL synchronous_commit TO off",
          "SET LOCAL plan_cache_mode TO force_generic_plan",
        ],
      },
    );
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
