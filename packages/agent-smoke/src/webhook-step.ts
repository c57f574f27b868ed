import { createHmac, timingSafeEqual } from "node:crypto";
import { DomainError } from "@switchboard/kit";
import { webhook, wire } from "@switchboard/proto";
import { pageSize } from "./find-in-pages.js";
import { runKey, type SmokeState } from "./smoke-state.js";
import { StepFailure, type StepScope } from "./step-scope.js";
import type { StepSpec } from "./step-runner.js";

/**
 * Standard Webhooks 1.0, as a receiver checks it: some `v1,` entry of the signature header is
 * the base64 HMAC-SHA256, keyed by the secret's bytes, of `id.timestamp.body`.
 */
export function verifiesWithSecret(secret: string, receipt: webhook.SinkReceipt): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key)
    .update(`${receipt.webhookId}.${receipt.webhookTimestamp}.${receipt.body}`)
    .digest();
  return receipt.webhookSignature.split(" ").some((entry) => {
    if (!entry.startsWith("v1,")) return false;
    const presented = Buffer.from(entry.slice(3), "base64");
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  });
}

/** Runs older than this cannot still be going: their subscriptions are leftovers. */
const leftoverAgeMs = 10 * 60_000;
const marker = "smoke ";

async function deleteSubscription(scope: StepScope, state: SmokeState, subscriptionId: string) {
  try {
    await scope.rpc(state.backends.webhook, (c) => c.deleteSubscription, {
      accountId: state.accountId,
      subscriptionId,
    });
  } catch (error) {
    if (!(error instanceof DomainError && error.kind === "not-found")) throw error;
  }
}

/**
 * Subscribes the run to the internal sink (the cleanup deletes it), first deleting what an
 * earlier run could not: the account's sink subscriptions marked `smoke` and 10 minutes old.
 */
async function subscribeToSink(scope: StepScope, state: SmokeState) {
  const hooks = state.backends.webhook;
  const { url } = await scope.rpc(hooks, (c) => c.getInternalSink, { accountId: state.accountId });
  const { subscriptions } = await scope.rpc(hooks, (c) => c.listSubscriptions, {
    accountId: state.accountId,
    limit: pageSize,
    cursor: "",
  });
  const leftovers = subscriptions.filter(
    (s) =>
      s.url === url &&
      s.description?.startsWith(marker) === true &&
      Date.parse(s.createdAt) < Date.now() - leftoverAgeMs,
  );
  for (const leftover of leftovers) await deleteSubscription(scope, state, leftover.id);
  const { subscription, secret } = await scope.rpc(
    hooks,
    (c) => c.createSubscription,
    {
      accountId: state.accountId,
      url,
      events: ["webhook.test"],
      description: `${marker}${state.smokeId}`,
      internalSink: true,
    },
    runKey(state, "subscription"),
  );
  if (!subscription) throw new StepFailure("the webhook service answered without a subscription");
  state.pending.set(subscription.id, {
    label: `webhook subscription ${subscription.id}`,
    undo: (s) => deleteSubscription(s, state, subscription.id),
  });
  return { subscriptionId: subscription.id, secret };
}

/**
 * webhooks.delivery: a smoke subscription to the platform's internal sink (deleted by the
 * cleanup), a `webhook.test` event through the real queue and signing, until the sink holds a
 * receipt that verifies (the sink's check and this one, with the secret the smoke was given)
 * and the delivery is recorded as delivered.
 */
export function webhookStep(state: SmokeState, budgetMs: number): StepSpec {
  const hooks = state.backends.webhook;
  const accountId = state.accountId;
  return {
    name: "webhooks.delivery",
    budgetMs,
    run: async (scope) => {
      const { subscriptionId, secret } = await subscribeToSink(scope, state);
      const { delivery } = await scope.rpc(
        hooks,
        (c) => c.testSubscription,
        { accountId, subscriptionId },
        runKey(state, "webhook-test"),
      );
      if (!delivery) throw new StepFailure("the webhook service answered without a delivery");
      const { receipts } = await scope.poll(
        "the internal sink to receive the webhook",
        () =>
          scope.rpc(hooks, (c) => c.listSinkReceipts, {
            accountId,
            webhookId: delivery.eventId,
            limit: 5,
          }),
        (r) => r.receipts.length > 0,
      );
      if (!receipts.some((r) => r.verified)) {
        throw new StepFailure(`the sink received ${delivery.eventId} but it did not verify`);
      }
      if (!receipts.some((r) => verifiesWithSecret(secret, r))) {
        throw new StepFailure(`${delivery.eventId} does not verify with the subscription's secret`);
      }
      const { delivery: final } = await scope.poll(
        "the delivery to be recorded as delivered",
        () => scope.rpc(hooks, (c) => c.getDelivery, { accountId, deliveryId: delivery.id }),
        (r) => r.delivery?.status !== webhook.DeliveryStatus.PENDING,
      );
      if (final?.status !== webhook.DeliveryStatus.DELIVERED) {
        const status = final && wire.deliveryStatus.spell(final.status);
        throw new StepFailure(`${delivery.id} ended ${status ?? "unknown"}`);
      }
      state.delivery = delivery;
      state.records.set("webhooks.delivery", [
        { kind: "webhook.delivered", resourceId: delivery.id },
      ]);
      return `${delivery.id} (${delivery.eventId}) delivered to the internal sink and verified`;
    },
  };
}
