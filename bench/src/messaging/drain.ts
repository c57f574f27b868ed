import type { Observer } from "./observer.js";
import { settings, sleep } from "./settings.js";

/** The messages by status at one poll (`waitForDrain`), from the start of the wait. */
export interface DrainSample {
  t_ms: number;
  total: number;
  pending: number;
  delivered: number;
  other: number;
}

/** Polls every second until `total` messages exist and none is still queued/sending/sent. */
export async function waitForDrain(
  db: Observer,
  total: number,
  onSample: (sample: DrainSample) => void,
): Promise<DrainSample & { drained: boolean }> {
  const started = Date.now();
  let lastPending = -1;
  let stalledFor = 0;
  for (;;) {
    const { rows } = await db.query<Omit<DrainSample, "t_ms">>(
      `SELECT count(*)::int AS total,
              count(*) FILTER (WHERE status IN ('queued', 'sending', 'sent'))::int AS pending,
              count(*) FILTER (WHERE status = 'delivered')::int AS delivered,
              count(*) FILTER (WHERE status NOT IN ('queued', 'sending', 'sent', 'delivered'))::int AS other
         FROM messaging.messages`,
    );
    const sample: DrainSample = { t_ms: Date.now() - started, ...rows[0]! };
    onSample(sample);
    if (sample.pending > 0 && sample.pending === lastPending) stalledFor += 1;
    else stalledFor = 0;
    lastPending = sample.pending;
    if (stalledFor === 15) {
      // No progress for 15 s: say which messages wait, and where (diagnostics only).
      const stuck = await db.query(
        `SELECT id, status, attempts, scheduled_at, sent_at, updated_at, lease_until,
                provider_message_id IS NOT NULL AS has_provider_id
           FROM messaging.messages WHERE status IN ('queued', 'sending', 'sent') LIMIT 5`,
      );
      console.log(`no progress for 15 s; waiting: ${JSON.stringify(stuck.rows)}`);
    }
    if (sample.total >= total && sample.pending === 0) return { drained: true, ...sample };
    if (Date.now() - started > settings.drainTimeoutMs) return { drained: false, ...sample };
    await sleep(1_000);
  }
}

/** Every event relayed to the queues (the relay may trail the last delivery). */
export async function relayed(db: Observer): Promise<void> {
  for (let i = 0; i < 120; i++) {
    const { rows } = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM messaging.outbox WHERE published_at IS NULL",
    );
    if (rows[0]!.n === 0) return;
    await sleep(500);
  }
}

/** From the first measured message's creation to the last one's delivery, in the database's clock. */
export async function firstAcceptToLastDelivery(db: Observer, ids: string[]): Promise<number> {
  const { rows } = await db.query<{ ms: string }>(
    `SELECT extract(epoch FROM max(delivered_at) - min(created_at)) * 1000 AS ms
       FROM messaging.messages WHERE id = ANY($1)`,
    [ids],
  );
  return Math.round(Number(rows[0]!.ms));
}
