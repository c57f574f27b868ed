import { appendEvents, withTransaction, type Pool } from "@switchboard/kit";
import { schema } from "./context.js";
import { disableSubscription } from "./subscription-state.js";

/**
 * What one attempt did, written in one transaction with its consequences: the attempt log row,
 * the delivery's new state (guarded: only a pending delivery of the job's dispatch generation
 * moves), the subscription's failure streak, and the events (`webhook.delivered`, or
 * `webhook.subscription_disabled`). Each returns false when the row had already moved on.
 */
export interface AttemptFacts {
  deliveryId: string;
  dispatch: number;
  subscriptionId: string;
  accountId: string;
  eventId: string;
  eventType: string;
  startedAt: Date;
  durationMs: number;
  statusCode: number | undefined;
}

/**
 * Records successful attempts, many in one transaction (the worker batches concurrent
 * deliveries): each delivery moves to delivered with its attempt logged, the subscriptions'
 * failure streaks end, and one `webhook.delivered` per delivery lands in the outbox. Answers,
 * per input, whether the row moved (false: it had moved on already).
 */
export async function recordDeliveredBatch(
  pool: Pool,
  batch: readonly AttemptFacts[],
): Promise<boolean[]> {
  if (batch.length === 0) return [];
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ id: string; attempts: number }>(
      `WITH v AS (
         SELECT * FROM unnest($1::text[], $2::int[], $3::timestamptz[], $4::int[], $5::int[])
           AS v (id, dispatch, started_at, duration_ms, status_code)
       ), d AS (
         UPDATE webhook.deliveries d
            SET status = 'delivered', delivered_at = now(), next_attempt_at = NULL,
                attempts = d.attempts + 1, cycle_attempts = d.cycle_attempts + 1,
                last_attempt_at = v.started_at, last_status_code = v.status_code, last_error = NULL
           FROM v
          WHERE d.id = v.id AND d.status = 'pending' AND d.dispatch = v.dispatch
          RETURNING d.id, d.attempts, d.subscription_id, v.started_at, v.duration_ms, v.status_code
       ), logged AS (
         INSERT INTO webhook.delivery_attempts
           (delivery_id, attempt, started_at, duration_ms, status_code, outcome)
         SELECT id, attempts, started_at, duration_ms, status_code, 'delivered' FROM d
       ), streak AS (
         UPDATE webhook.subscriptions s SET failing_since = NULL
          WHERE s.id IN (SELECT subscription_id FROM d) AND s.failing_since IS NOT NULL
       )
       SELECT id, attempts FROM d`,
      [
        batch.map((f) => f.deliveryId),
        batch.map((f) => f.dispatch),
        batch.map((f) => f.startedAt),
        batch.map((f) => f.durationMs),
        batch.map((f) => f.statusCode ?? null),
      ],
    );
    const attempts = new Map(rows.map((row) => [row.id, row.attempts]));
    const seen = new Set<string>();
    const moved = batch.filter((facts) => {
      const first = attempts.has(facts.deliveryId) && !seen.has(facts.deliveryId);
      seen.add(facts.deliveryId);
      return first;
    });
    await appendEvents(
      client,
      schema,
      moved.map((facts) => ({
        type: "webhook.delivered",
        accountId: facts.accountId,
        resourceId: facts.deliveryId,
        data: {
          delivery_id: facts.deliveryId,
          subscription_id: facts.subscriptionId,
          event_id: facts.eventId,
          event_type: facts.eventType,
          attempt: attempts.get(facts.deliveryId),
          status_code: facts.statusCode,
          latency_ms: facts.durationMs,
        },
      })),
      // Thousands a second: the relay's polling picks these up, no NOTIFY per commit.
      { notify: false },
    );
    const recorded = new Set(moved);
    return batch.map((facts) => recorded.has(facts));
  });
}

export interface FailureFacts extends AttemptFacts {
  errorClass: string;
  /** No attempt follows: the schedule is exhausted (or retrying is pointless). */
  final: boolean;
  /** When the next attempt is due (ignored when final). */
  nextAttemptAt: Date;
  /** 410: the receiver says the endpoint is gone; the subscription is disabled. */
  gone: boolean;
  /** A streak of failures this long (ms) disables the subscription. */
  disableAfterMs: number;
}

export type FailureResult = "moved-on" | "retrying" | "failed" | "disabled";

export async function recordFailure(pool: Pool, facts: FailureFacts): Promise<FailureResult> {
  return withTransaction(pool, async (client) => {
    const final = facts.final || facts.gone;
    const { rows } = await client.query<{ attempts: number; failing_since: Date | null }>(
      `WITH d AS (
         UPDATE webhook.deliveries
            SET attempts = attempts + 1, cycle_attempts = cycle_attempts + 1,
                last_attempt_at = $3, last_status_code = $5, last_error = $6,
                status = CASE WHEN $7 THEN 'failed' ELSE 'pending' END,
                next_attempt_at = CASE WHEN $7 THEN NULL ELSE $8::timestamptz END,
                failed_at = CASE WHEN $7 THEN now() END
          WHERE id = $1 AND status = 'pending' AND dispatch = $2
          RETURNING attempts
       ), logged AS (
         INSERT INTO webhook.delivery_attempts
           (delivery_id, attempt, started_at, duration_ms, status_code, outcome, error)
         SELECT $1, d.attempts, $3, $4, $5, CASE WHEN $7 THEN 'failed' ELSE 'retrying' END, $6
           FROM d
       ), streak AS (
         UPDATE webhook.subscriptions SET failing_since = $3
          WHERE id = $9 AND status = 'active' AND failing_since IS NULL
            AND EXISTS (SELECT 1 FROM d)
          RETURNING failing_since
       )
       SELECT d.attempts,
              coalesce((SELECT failing_since FROM streak),
                       (SELECT failing_since FROM webhook.subscriptions WHERE id = $9)) AS failing_since
         FROM d`,
      [
        facts.deliveryId,
        facts.dispatch,
        facts.startedAt,
        facts.durationMs,
        facts.statusCode ?? null,
        facts.errorClass,
        final,
        facts.nextAttemptAt,
        facts.subscriptionId,
      ],
    );
    const row = rows[0];
    if (!row) return "moved-on";
    const failingFor = row.failing_since ? Date.now() - row.failing_since.getTime() : 0;
    const reason = facts.gone ? "gone" : failingFor >= facts.disableAfterMs ? "failing" : undefined;
    if (reason && (await disableSubscription(client, facts.subscriptionId, reason)))
      return "disabled";
    return final ? "failed" : "retrying";
  });
}

/** A delivery whose subscription is no longer active ends without an attempt. */
export async function recordInactive(
  pool: Pool,
  deliveryId: string,
  dispatch: number,
  subscriptionStatus: string,
): Promise<void> {
  await pool.query(
    `UPDATE webhook.deliveries
        SET status = 'failed', failed_at = now(), next_attempt_at = NULL, last_error = $3
      WHERE id = $1 AND status = 'pending' AND dispatch = $2`,
    [deliveryId, dispatch, `subscription_${subscriptionStatus}`],
  );
}
