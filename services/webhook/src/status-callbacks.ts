import {
  eventTypeMatches,
  FieldErrors,
  newId,
  requireAccount,
  withTransaction,
  type EventEnvelope,
  type PoolClient,
  type Queryable,
} from "@switchboard/kit";
import type { webhook } from "@switchboard/proto";
import type { WebhookContext } from "./context.js";
import { checkDeliveryPort } from "./delivery-ports.js";
import { patternProblem } from "./event-catalog.js";
import { addCurrentSecret, currentSecret, rotateSecret } from "./secrets.js";
import { checkEventPatterns, guardTargetUrl, parseTargetUrl } from "./subscription-input.js";
import { targetGuard } from "./subscriptions.js";

/**
 * Status callbacks (docs/api.md): a call or message names a URL (and optionally which of its
 * events) when it is created; its producer copies `status_callback` into each event's data, and
 * the fan-out delivers the event there too. Each account has one hidden subscription of purpose
 * `status_callback`: its secret signs every status callback of the account, its deliveries are
 * their log, and the delivery worker sends each to its own `target_url`.
 */
const pointer = "#/status_callback";
const resourceKinds = ["call", "message"] as const;

/** Refuses what a subscription's URL would be refused for; returns the callback normalised. */
export async function checkStatusCallback(
  ctx: WebhookContext,
  request: webhook.CheckStatusCallbackRequest,
): Promise<webhook.StatusCallback> {
  const errors = requireAccount(request.accountId);
  const kind = request.resourceKind as (typeof resourceKinds)[number];
  if (!resourceKinds.includes(kind)) errors.add("#/resource_kind", "must be call or message");
  const url = parseTargetUrl(request.statusCallback?.url ?? "", errors, `${pointer}/url`);
  const requested = request.statusCallback?.events ?? [];
  const events =
    requested.length === 0
      ? []
      : checkEventPatterns(requested, errors, `${pointer}/events`, (pattern) =>
          pattern.startsWith(`${kind}.`)
            ? patternProblem(pattern)
            : `must be one of the ${kind}'s events (${kind}.*)`,
        );
  errors.throwIfAny();
  checkDeliveryPort(url!, ctx.settings, `${pointer}/url`);
  const href = await guardTargetUrl(url!, targetGuard(ctx, false), `${pointer}/url`);
  return { url: href, events };
}

/** The event's status callback, as its producer copied it into `data`, when one is wanted. */
export function statusCallbackOf(event: EventEnvelope): { url: string } | undefined {
  const callback = (event.data as { status_callback?: unknown }).status_callback;
  if (callback === null || typeof callback !== "object") return undefined;
  const { url, events } = callback as { url?: unknown; events?: unknown };
  if (typeof url !== "string" || url === "") return undefined;
  const patterns = Array.isArray(events) ? events.filter((e) => typeof e === "string") : [];
  return eventTypeMatches(event.type, patterns) ? { url } : undefined;
}

interface CallbackSubscription {
  id: string;
  created: boolean;
}

/** The account's status-callback subscription, made (with its secret) on first use. */
export async function statusCallbackSubscription(
  client: Queryable,
  ctx: Pick<WebhookContext, "box">,
  accountId: string,
): Promise<CallbackSubscription> {
  const existing = await client.query<{ id: string }>(
    `SELECT id FROM webhook.subscriptions WHERE account_id = $1 AND purpose = 'status_callback'`,
    [accountId],
  );
  if (existing.rows[0]) return { id: existing.rows[0].id, created: false };
  const id = newId("whs");
  const inserted = await client.query<{ id: string }>(
    `INSERT INTO webhook.subscriptions (id, account_id, url, events, status, purpose)
     VALUES ($1, $2, 'status-callback', '{*}', 'active', 'status_callback')
     ON CONFLICT (account_id) WHERE purpose = 'status_callback' DO NOTHING
     RETURNING id`,
    [id, accountId],
  );
  if (!inserted.rows[0]) return statusCallbackSubscription(client, ctx, accountId);
  await addCurrentSecret(client, ctx.box, id);
  return { id, created: true };
}

async function secretReply(
  client: PoolClient,
  ctx: WebhookContext,
  subscriptionId: string,
  secret: string,
): Promise<webhook.StatusCallbackSecret> {
  const { rows } = await client.query<{ expires_at: Date | null }>(
    `SELECT max(expires_at) AS expires_at FROM webhook.subscription_secrets
      WHERE subscription_id = $1 AND expires_at > now()`,
    [subscriptionId],
  );
  const previous = rows[0]?.expires_at;
  return {
    subscriptionId,
    secret,
    ...(previous ? { previousSecretExpiresAt: previous.toISOString() } : {}),
  };
}

/** The account's status-callback secret; with `rotate`, a new one (the old signs on a while). */
export async function statusCallbackSecret(
  ctx: WebhookContext,
  accountId: string,
  rotate: boolean,
): Promise<webhook.StatusCallbackSecret> {
  const errors = requireAccount(accountId) as FieldErrors;
  errors.throwIfAny();
  return withTransaction(ctx.pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [
      `switchboard:webhook:status-callback:${accountId}`,
    ]);
    const subscription = await statusCallbackSubscription(client, ctx, accountId);
    const secret =
      rotate && !subscription.created
        ? await rotateSecret(client, ctx.box, subscription.id, ctx.settings.secretOverlapMs)
        : await currentSecret(client, ctx.box, subscription.id);
    return secretReply(client, ctx, subscription.id, secret);
  });
}
