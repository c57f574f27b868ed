import { injectTraceContext, withTransaction, type Pool, type PoolClient } from "@switchboard/kit";

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

/** Something that wants to hear when a newly committed timer falls due (the action runner). */
export interface Waker {
  wake(atMs: number): void;
}

/**
 * One transaction of the call engine: the client, plus the durable timers it sets. Timers are
 * rows in call_control.scheduled_actions written in the same transaction as the state change
 * that needs them, so a committed state always has its timers and a rolled-back one has none.
 * After commit the local runner is woken for the earliest of them (other replicas poll).
 */
export class Tx {
  private readonly wakes: number[] = [];
  private readonly commitHooks: (() => void)[] = [];

  constructor(readonly client: PoolClient) {}

  async schedule(...actions: NewAction[]): Promise<void> {
    if (actions.length === 0) return;
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
    await this.client.query(
      `INSERT INTO call_control.scheduled_actions (call_id, kind, payload, due_at, trace_carrier)
       VALUES ${tuples.join(", ")}`,
      values,
    );
  }

  /** Drops a call's pending timers of the given kinds (e.g. when the call ended). */
  async cancel(callId: string, kinds: readonly string[]): Promise<void> {
    await this.client.query(
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

/** Runs `work` in one transaction and, once it committed, wakes `waker` for its timers. */
export async function inTransaction<T>(
  pool: Pool,
  waker: Waker,
  work: (tx: Tx) => Promise<T>,
): Promise<T> {
  let tx: Tx | undefined;
  const result = await withTransaction(pool, (client) => {
    tx = new Tx(client);
    return work(tx);
  });
  tx?.committed(waker);
  return result;
}
