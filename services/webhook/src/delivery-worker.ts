import {
  backoffDelay,
  initWebhookDeliveryMetrics,
  observeWebhookDelivery,
  RetryLaterError,
  traceHttpClient,
  UnrecoverableJobError,
  type Job,
  type QueueWorker,
} from "@switchboard/kit";
import type { WebhookContext } from "./context.js";
import { createBatcher } from "./batcher.js";
import {
  recordDeliveredBatch,
  recordFailure,
  recordInactive,
  type AttemptFacts,
} from "./delivery-records.js";
import { deliveryQueue, type DeliveryJob } from "./dispatch.js";
import { sendDelivery, statusClass, type SendOutcome } from "./http-sender.js";
import { createDeliveryCaches, type DeliveryCaches } from "./delivery-caches.js";
import { sealedSecretsInForce } from "./secrets.js";
import { signedHeaders } from "./signature.js";
import { checkWebhookUrl, UnsafeUrlError } from "./url-guard.js";

/**
 * The delivery worker: one job = one attempt of one delivery. The row says whether there is
 * anything to do (pending, this dispatch generation) and which attempt of the schedule this
 * is; the guard is run again and the connection pinned; the payload is signed with every
 * secret in force; the outcome is recorded. Retries are the job's: RetryLaterError with the
 * schedule's delay (jittered, raised to a Retry-After), UnrecoverableJobError when the
 * delivery is over. Any unexpected failure is retried with the schedule's delay too.
 */
interface LoadedDelivery {
  id: string;
  account_id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  status: string;
  dispatch: number;
  cycle_attempts: number;
  url: string;
  subscription_status: string;
  sealed: string[];
}

/** The deliveries (with their subscription and sealed secrets in force) of these ids. */
async function loadDeliveries(
  ctx: WebhookContext,
  ids: string[],
): Promise<(LoadedDelivery | undefined)[]> {
  const { rows } = await ctx.pool.query<LoadedDelivery>(
    `SELECT d.id, d.account_id, d.subscription_id, d.event_id, d.event_type, d.payload,
            d.status, d.dispatch, d.cycle_attempts, coalesce(d.target_url, s.url) AS url,
            s.status AS subscription_status,
            ${sealedSecretsInForce} AS sealed
       FROM webhook.deliveries d JOIN webhook.subscriptions s ON s.id = d.subscription_id
      WHERE d.id = ANY($1::text[])`,
    [ids],
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  return ids.map((id) => byId.get(id));
}

/**
 * The database work of one worker, batched across its concurrent deliveries: one load and one
 * recording transaction in flight at a time, the next batch gathering meanwhile.
 */
export interface DeliveryStore {
  load(id: string): Promise<LoadedDelivery | undefined>;
  recordDelivered(facts: AttemptFacts): Promise<boolean>;
}

export function batchedStore(ctx: WebhookContext): DeliveryStore {
  const loads = createBatcher((ids: string[]) => loadDeliveries(ctx, ids), {
    maxSize: 200,
    maxWaitMs: 2,
    maxInFlight: 1,
  });
  const delivered = createBatcher(
    (batch: AttemptFacts[]) => recordDeliveredBatch(ctx.pool, batch),
    { maxSize: 200, maxWaitMs: 5, maxInFlight: 1 },
  );
  return { load: (id) => loads.run(id), recordDelivered: (facts) => delivered.run(facts) };
}

export function startDeliveryWorker(ctx: WebhookContext): QueueWorker {
  const store = batchedStore(ctx);
  const caches = createDeliveryCaches({
    box: ctx.box,
    ...(ctx.guard.resolve ? { resolve: ctx.guard.resolve } : {}),
  });
  initWebhookDeliveryMetrics();
  return ctx.bus.consume<DeliveryJob>(deliveryQueue, (job) => deliverJob(ctx, store, caches, job), {
    concurrency: ctx.settings.concurrency,
  });
}

export async function deliverJob(
  ctx: WebhookContext,
  store: DeliveryStore,
  caches: DeliveryCaches,
  job: Job<DeliveryJob>,
): Promise<void> {
  const { settings } = ctx;
  const scheduleDelay = (attempt: number, minimumMs = 0) =>
    backoffDelay(
      { type: "schedule", delaysMs: settings.retryDelaysMs, jitter: settings.retryJitter },
      attempt,
      Math.min(minimumMs, Math.max(settings.retryAfterMaxMs, ...settings.retryDelaysMs)),
    );
  let attempt = 1;
  try {
    const row = await store.load(job.data.delivery_id);
    if (!row || row.status !== "pending" || row.dispatch !== job.data.dispatch) return;
    if (row.subscription_status !== "active") {
      await recordInactive(ctx.pool, row.id, row.dispatch, row.subscription_status);
      return;
    }
    attempt = row.cycle_attempts + 1;
    const startedAt = new Date();
    const outcome = await attemptOnce(ctx, caches, row);
    const facts: AttemptFacts = {
      deliveryId: row.id,
      dispatch: row.dispatch,
      subscriptionId: row.subscription_id,
      accountId: row.account_id,
      eventId: row.event_id,
      eventType: row.event_type,
      startedAt,
      durationMs: outcome.durationMs,
      statusCode: outcome.kind === "response" ? outcome.statusCode : undefined,
    };
    const verdict =
      outcome.kind === "response" ? statusClass(outcome.statusCode) : outcome.errorClass;
    const log = {
      delivery_id: row.id,
      subscription_id: row.subscription_id,
      event_type: row.event_type,
      attempt,
      status_code: facts.statusCode,
      latency_ms: outcome.durationMs,
    };
    if (verdict === "delivered") {
      await store.recordDelivered(facts);
      observeWebhookDelivery("delivered", outcome.durationMs);
      ctx.logger.info({ ...log, outcome: "delivered" }, "webhook attempt");
      return;
    }
    const final = attempt >= settings.retryDelaysMs.length + 1;
    const retryAfterMs = outcome.kind === "response" ? (outcome.retryAfterMs ?? 0) : 0;
    const delayMs = final ? 0 : scheduleDelay(attempt, retryAfterMs);
    const result = await recordFailure(ctx.pool, {
      ...facts,
      errorClass: verdict,
      final,
      gone: verdict === "gone",
      nextAttemptAt: new Date(Date.now() + delayMs),
      disableAfterMs: settings.disableAfterMs,
    });
    ctx.logger.info({ ...log, error: verdict, outcome: result }, "webhook attempt");
    if (result !== "moved-on") {
      observeWebhookDelivery(result === "retrying" ? "retry" : result, outcome.durationMs);
    }
    if (result === "retrying") throw new RetryLaterError(`attempt ${attempt}: ${verdict}`, delayMs);
    if (result !== "moved-on") throw new UnrecoverableJobError(`delivery ${result}: ${verdict}`);
  } catch (error) {
    if (error instanceof RetryLaterError || error instanceof UnrecoverableJobError) throw error;
    // The database or a bug, not the receiver: try the job again on the schedule.
    ctx.logger.warn({ err: error, delivery_id: job.data.delivery_id }, "webhook job failed");
    throw new RetryLaterError("delivery job failed", scheduleDelay(attempt), { cause: error });
  }
}

/**
 * Names the subscription whose secrets signed a delivery, so an endpoint that serves several
 * picks the right secret (docs/api.md "Webhook subscriptions"). Not signed: the signature is
 * what proves it.
 */
export const subscriptionHeader = "switchboard-subscription-id";

/** Guard, sign, send: one HTTP attempt, or the reason it could not be made. */
async function attemptOnce(
  ctx: WebhookContext,
  caches: DeliveryCaches,
  row: LoadedDelivery,
): Promise<SendOutcome> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let target;
  try {
    target = await checkWebhookUrl(new URL(row.url), {
      ...ctx.guard,
      resolve: caches.resolve,
      timeoutMs: ctx.settings.timeoutMs,
    });
  } catch (error) {
    if (!(error instanceof UnsafeUrlError)) throw error;
    return {
      kind: "error",
      errorClass: error.kind === "dns" ? "dns_failure" : "unsafe_url",
      durationMs: elapsed(),
    };
  }
  const keys = caches.keys(row.subscription_id, row.sealed);
  const headers = {
    ...signedHeaders(keys, row.event_id, row.payload),
    [subscriptionHeader]: row.subscription_id,
  };
  const remaining = Math.max(1, ctx.settings.timeoutMs - elapsed());
  const sent = await traceHttpClient(
    {
      method: "POST",
      url: target.url,
      attributes: {
        "switchboard.webhook.delivery_id": row.id,
        "switchboard.webhook.subscription_id": row.subscription_id,
        "switchboard.event.type": row.event_type,
      },
    },
    () =>
      sendDelivery({ target, headers: { ...headers }, body: row.payload, timeoutMs: remaining }),
    (outcome) =>
      outcome.kind === "response"
        ? { statusCode: outcome.statusCode }
        : { errorType: outcome.errorClass },
  );
  return { ...sent, durationMs: elapsed() };
}
