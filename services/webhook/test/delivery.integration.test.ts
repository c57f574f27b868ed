import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhook } from "@switchboard/proto";
import { requireTestRedis } from "@switchboard/kit/events/testing";
import { account, startHarness, waitFor, type Harness, type Mode } from "./support/harness.js";
import { startReceiver, type Receiver } from "@switchboard/test-support/fixtures/webhook-receiver";

const { AttemptOutcome, DeliveryStatus } = webhook;

// npm test needs Redis (README): a Redis that is down fails this suite, never skips it.
await requireTestRedis();

/** Real PostgreSQL + BullMQ on Redis (mesh) and PGlite + the in-process queue (embedded). */
describe.each<Mode>(["postgres+bullmq", "pglite+memory"])("webhook delivery on %s", (mode) => {
  let h: Harness;
  let receiver: Receiver;
  beforeAll(async () => {
    h = await startHarness({ mode });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await h?.stop();
  });

  const subscribe = async (url: string, events: string[], accountId = account) =>
    h.call(h.client.createSubscription, {
      accountId,
      url,
      events,
    }) as Promise<webhook.CreateSubscriptionResponse>;
  const deliveriesOf = async (subscriptionId: string) =>
    (
      await h.call(h.client.listDeliveries, {
        accountId: account,
        subscriptionId,
        limit: 200,
        cursor: "",
      })
    ).deliveries;

  it("delivers the account's matching events, signed per Standard Webhooks", async () => {
    const { subscription, secret } = await subscribe(receiver.url, [
      "number.*",
      "message.delivered",
    ]);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const other = await subscribe(receiver.url, ["*"], "acct_other");

    const held = await h.emit({ type: "number.held", data: { number: "+14155550100" } });
    await h.emit({ type: "call.completed" }); // not subscribed
    await h.emit({ type: "webhook.delivered" }); // internal fact, never delivered
    await h.emit({ type: "number.assigned", accountId: "acct_stranger" }); // another account
    const delivered = await h.emit({ type: "message.delivered" });
    await waitFor(() => receiver.received.length >= 2, 10_000, "two deliveries");
    await new Promise((resolve) => setTimeout(resolve, 300));

    expect(receiver.received.map((r) => r.headers["webhook-id"]).sort()).toEqual(
      [held, delivered].sort(),
    );
    const request = receiver.received.find((r) => r.headers["webhook-id"] === held)!;
    const verified = new Webhook(secret).verify(request.body, {
      "webhook-id": String(request.headers["webhook-id"]),
      "webhook-timestamp": String(request.headers["webhook-timestamp"]),
      "webhook-signature": String(request.headers["webhook-signature"]),
    }) as Record<string, unknown>;
    expect(Object.keys(verified).sort()).toEqual([
      "account_id",
      "data",
      "id",
      "sequence",
      "timestamp",
      "type",
    ]);
    expect(verified).toMatchObject({
      id: held,
      type: "number.held",
      account_id: account,
      sequence: 1,
      data: { number: "+14155550100" },
    });
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(() =>
      new Webhook(other.secret).verify(request.body, {
        "webhook-id": String(request.headers["webhook-id"]),
        "webhook-timestamp": String(request.headers["webhook-timestamp"]),
        "webhook-signature": String(request.headers["webhook-signature"]),
      }),
    ).toThrow();

    const deliveries = await deliveriesOf(subscription!.id);
    expect(deliveries.map((d) => [d.eventId, d.status, d.attempts, d.lastStatusCode])).toEqual(
      expect.arrayContaining([
        [held, DeliveryStatus.DELIVERED, 1, 200],
        [delivered, DeliveryStatus.DELIVERED, 1, 200],
      ]),
    );
    const facts = await h.pool.query(
      `SELECT data FROM webhook.outbox WHERE type = 'webhook.delivered' ORDER BY occurred_at`,
    );
    expect(facts.rows.map((r) => r.data.event_id).sort()).toEqual([held, delivered].sort());
    expect(facts.rows[0].data).toMatchObject({
      subscription_id: subscription!.id,
      attempt: 1,
      status_code: 200,
    });
  });

  it("500, 500, 200 → delivered on the third attempt, same webhook-id", async () => {
    const local = await startReceiver();
    try {
      local.script(500, 500, 200);
      const { subscription } = await subscribe(local.url, ["call.completed"]);
      const id = await h.emit({
        type: "call.completed",
        resourceId: "call_x",
        data: { duration_seconds: 3 },
      });
      await waitFor(
        async () => (await deliveriesOf(subscription!.id))[0]?.status === DeliveryStatus.DELIVERED,
        10_000,
        "delivered",
      );
      expect(local.received.map((r) => r.headers["webhook-id"])).toEqual([id, id, id]);
      expect(new Set(local.received.map((r) => r.body)).size).toBe(1);
      const gaps = local.received.slice(1).map((r, i) => r.at - local.received[i]!.at);
      expect(gaps[0]).toBeGreaterThanOrEqual(75); // 100 ms, jitter 20 %
      expect(gaps[1]).toBeGreaterThanOrEqual(155); // 200 ms, jitter 20 %
      const [delivery] = await deliveriesOf(subscription!.id);
      const detail = await h.call(h.client.getDelivery, {
        accountId: account,
        deliveryId: delivery!.id,
      });
      expect(detail.delivery!.attempts).toBe(3);
      expect(
        detail.delivery!.attemptLog.map((a) => [
          a.attempt,
          a.statusCode,
          a.outcome,
          a.error ?? null,
        ]),
      ).toEqual([
        [1, 500, AttemptOutcome.RETRYING, "http_status"],
        [2, 500, AttemptOutcome.RETRYING, "http_status"],
        [3, 200, AttemptOutcome.DELIVERED, null],
      ]);
    } finally {
      await local.close();
    }
  });
});
