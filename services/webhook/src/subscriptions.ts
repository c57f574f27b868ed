import {
  checkIdempotencyKey,
  DomainError,
  isId,
  newId,
  notFound,
  type PoolClient,
  replayOrMismatch,
  requestFingerprint,
  requireAccount,
  withTransaction,
} from "@switchboard/kit";
import { wire, type webhook } from "@switchboard/proto";
import type { WebhookContext } from "./context.js";
import { addCurrentSecret, currentSecret, dropSecrets, rotateSecret } from "./secrets.js";
import {
  checkDescription,
  checkEventPatterns,
  guardTargetUrl,
  parseTargetUrl,
} from "./subscription-input.js";
import { failPendingDeliveries } from "./subscription-state.js";
import type { GuardOptions } from "./url-guard.js";
import { checkDeliveryPort } from "./delivery-ports.js";
import { subscriptionColumns, toSubscription, type SubscriptionRow } from "./rows.js";

/** Serialises one account's subscription creation (the cap and the idempotency key). */
const lockAccount = (client: PoolClient, accountId: string) =>
  client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [
    `switchboard:webhook:subscriptions:${accountId}`,
  ]);

const selectSubscription = async (client: PoolClient, accountId: string, id: string) => {
  const { rows } = await client.query<SubscriptionRow>(
    `SELECT ${subscriptionColumns} FROM webhook.subscriptions s
      WHERE s.id = $1 AND s.account_id = $2 AND s.status <> 'deleted'`,
    [id, accountId],
  );
  return rows[0];
};

/** Locks the account's visible subscription for a change, or 404. */
export async function lockSubscription(
  client: PoolClient,
  accountId: string,
  id: string,
): Promise<SubscriptionRow> {
  if (!isId(id, "whs")) throw notFound("the subscription");
  const { rows } = await client.query<{ id: string }>(
    `SELECT id FROM webhook.subscriptions
      WHERE id = $1 AND account_id = $2 AND status <> 'deleted' AND purpose = 'subscription'
      FOR UPDATE`,
    [id, accountId],
  );
  if (!rows[0]) throw notFound("the subscription");
  return (await selectSubscription(client, accountId, id))!;
}

/**
 * The guard for a target a request names: the internal sink's origin only for the platform's
 * own smoke subscription; from the API it is refused exactly as any unlisted loopback port, so
 * the answer does not reveal where the sink listens.
 */
export const targetGuard = (ctx: WebhookContext, internalSink: boolean): GuardOptions =>
  internalSink
    ? ctx.guard
    : { ...ctx.guard, internalOrigins: [], forbiddenOrigins: ctx.guard.internalOrigins ?? [] };

export async function createSubscription(
  ctx: WebhookContext,
  request: webhook.CreateSubscriptionRequest,
  idempotencyKey: string | undefined,
): Promise<webhook.CreateSubscriptionResponse> {
  const errors = requireAccount(request.accountId);
  const url = parseTargetUrl(request.url, errors);
  const events = checkEventPatterns(request.events, errors);
  checkDescription(request.description, errors);
  errors.throwIfAny();
  checkIdempotencyKey(idempotencyKey);
  if (request.internalSink !== true) checkDeliveryPort(url!, ctx.settings);
  const href = await guardTargetUrl(url!, targetGuard(ctx, request.internalSink === true));
  const description = request.description?.trim() || null;
  const fingerprint = requestFingerprint("create-subscription", { href, events, description });

  return withTransaction(ctx.pool, async (client) => {
    await lockAccount(client, request.accountId);
    if (idempotencyKey !== undefined) {
      const { rows } = await client.query<{ id: string; request_fingerprint: string }>(
        `SELECT id, request_fingerprint FROM webhook.subscriptions
          WHERE account_id = $1 AND idempotency_key = $2`,
        [request.accountId, idempotencyKey],
      );
      const previous = rows[0] && replayOrMismatch(rows[0], fingerprint, rows[0]);
      const existing =
        previous && (await selectSubscription(client, request.accountId, previous.id));
      if (existing) {
        return {
          subscription: toSubscription(existing),
          secret: await currentSecret(client, ctx.box, existing.id),
        };
      }
      if (previous) throw notFound("the subscription created with this Idempotency-Key");
    }
    const { rows: counted } = await client.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM webhook.subscriptions
        WHERE account_id = $1 AND status <> 'deleted' AND purpose = 'subscription'`,
      [request.accountId],
    );
    const limit = ctx.settings.subscriptionLimit;
    if ((counted[0]?.count ?? 0) >= limit) {
      throw new DomainError("conflict", `the account already has ${limit} webhook subscriptions`, {
        extensions: { limit },
      });
    }
    const id = newId("whs");
    await client.query(
      `INSERT INTO webhook.subscriptions
         (id, account_id, url, events, description, status, idempotency_key, request_fingerprint)
       VALUES ($1, $2, $3, $4, $5, 'active', $6, $7)`,
      [id, request.accountId, href, events, description, idempotencyKey ?? null, fingerprint],
    );
    const secret = await addCurrentSecret(client, ctx.box, id);
    const created = await selectSubscription(client, request.accountId, id);
    return { subscription: toSubscription(created!), secret };
  });
}

export async function updateSubscription(
  ctx: WebhookContext,
  request: webhook.UpdateSubscriptionRequest,
): Promise<webhook.Subscription> {
  const errors = requireAccount(request.accountId);
  const url = request.url !== undefined ? parseTargetUrl(request.url, errors) : undefined;
  const events = request.events ? checkEventPatterns(request.events.types, errors) : undefined;
  checkDescription(request.description, errors);
  const status = request.status && wire.subscriptionStatus.spell(request.status);
  if (request.status !== undefined && status !== "active" && status !== "paused") {
    errors.add("#/status", "must be active or paused");
  }
  errors.throwIfAny();
  if (url) checkDeliveryPort(url, ctx.settings);
  const href = url ? await guardTargetUrl(url, targetGuard(ctx, false)) : undefined;

  return withTransaction(ctx.pool, async (client) => {
    const current = await lockSubscription(client, request.accountId, request.subscriptionId);
    if (status === "paused" && current.status === "disabled") {
      throw new DomainError(
        "invalid-state",
        "the subscription is disabled; set status active to re-enable it",
        { extensions: { status: current.status } },
      );
    }
    const nextStatus = status ?? current.status;
    await client.query(
      `UPDATE webhook.subscriptions
          SET url = coalesce($3, url),
              events = coalesce($4, events),
              description = CASE WHEN $5::boolean THEN $6 ELSE description END,
              status = $7,
              disabled_reason = CASE WHEN $7 = 'disabled' THEN disabled_reason END,
              disabled_at = CASE WHEN $7 = 'disabled' THEN disabled_at END,
              failing_since = CASE WHEN status <> $7 THEN NULL ELSE failing_since END,
              updated_at = now()
        WHERE id = $1 AND account_id = $2 AND status <> 'deleted'`,
      [
        current.id,
        request.accountId,
        href ?? null,
        events ?? null,
        request.description !== undefined,
        request.description?.trim() || null,
        nextStatus,
      ],
    );
    if (nextStatus === "paused" && current.status === "active") {
      await failPendingDeliveries(client, current.id, "subscription_paused");
    }
    return toSubscription((await selectSubscription(client, request.accountId, current.id))!);
  });
}

export async function deleteSubscription(
  ctx: WebhookContext,
  request: webhook.DeleteSubscriptionRequest,
): Promise<void> {
  requireAccount(request.accountId).throwIfAny();
  await withTransaction(ctx.pool, async (client) => {
    const current = await lockSubscription(client, request.accountId, request.subscriptionId);
    await client.query(
      `UPDATE webhook.subscriptions
          SET status = 'deleted', deleted_at = now(), updated_at = now(),
              disabled_reason = NULL, disabled_at = NULL
        WHERE id = $1 AND status <> 'deleted'`,
      [current.id],
    );
    await failPendingDeliveries(client, current.id, "subscription_deleted");
    await dropSecrets(client, current.id);
  });
}

export async function rotateSubscriptionSecret(
  ctx: WebhookContext,
  request: webhook.RotateSubscriptionSecretRequest,
): Promise<webhook.RotateSubscriptionSecretResponse> {
  requireAccount(request.accountId).throwIfAny();
  return withTransaction(ctx.pool, async (client) => {
    const current = await lockSubscription(client, request.accountId, request.subscriptionId);
    const secret = await rotateSecret(client, ctx.box, current.id, ctx.settings.secretOverlapMs);
    await client.query(`UPDATE webhook.subscriptions SET updated_at = now() WHERE id = $1`, [
      current.id,
    ]);
    const rotated = await selectSubscription(client, request.accountId, current.id);
    return { subscription: toSubscription(rotated!), secret };
  });
}

export { selectSubscription };
