import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhook } from "@switchboard/proto";
import { requireTestRedis } from "@switchboard/kit/events/testing";
import { fanOut } from "../src/fan-out.js";
import { account, failure, sleep, startHarness, waitFor, type Harness } from "./support/harness.js";
import { startReceiver, type Receiver } from "@switchboard/test-support/fixtures/webhook-receiver";

const { AttemptOutcome, DeliveryStatus, DisabledReason, SubscriptionStatus } = webhook;

// npm test needs Redis (README): a Redis that is down fails this suite, never skips it.
await requireTestRedis();

/** Failure handling on real PostgreSQL + BullMQ with real HTTP receivers on loopback. */
describe("webhook retries and failures (postgres + bullmq)", () => {
  let h: Harness;
  const receivers: Receiver[] = [];
  beforeAll(async () => {
    h = await startHarness({
      env: { WEBHOOK_TIMEOUT_MS: "300", WEBHOOK_SECRET_OVERLAP: "1h" },
      hosts: { "hooks.rebind.test": ["93.184.215.14"] },
    });
  });
  afterAll(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    await h?.stop();
  });

  const receiver = async () => {
    const started = await startReceiver();
    receivers.push(started);
    return started;
  };
  const subscribe = async (url: string, events: string[] = ["number.*"]) =>
    (await h.call(h.client.createSubscription, {
      accountId: account,
      url,
      events,
    })) as webhook.CreateSubscriptionResponse;
  const deliveries = async (subscriptionId: string) =>
    (
      await h.call(h.client.listDeliveries, {
        accountId: account,
        subscriptionId,
        limit: 200,
        cursor: "",
      })
    ).deliveries;
  const delivery = async (deliveryId: string) =>
    (await h.call(h.client.getDelivery, { accountId: account, deliveryId })).delivery!;
  const subscription = async (subscriptionId: string) =>
    (await h.call(h.client.getSubscription, { accountId: account, subscriptionId })).subscription!;
  const settled = (subscriptionId: string, count: number) =>
    waitFor(
      async () => {
        const list = await deliveries(subscriptionId);
        return list.length >= count && list.every((d) => d.status !== DeliveryStatus.PENDING);
      },
      15_000,
      `${count} settled deliveries`,
    );

  it("410 disables the subscription, fails its delivery and records webhook.subscription_disabled", async () => {
    const r = await receiver();
    r.fallback = 410;
    const watcher = await receiver();
    await subscribe(watcher.url, ["webhook.subscription_disabled"]);
    const { subscription: sub } = await subscribe(r.url);
    await h.emit({ type: "number.held" });
    await settled(sub!.id, 1);
    // The account's other subscriptions hear about it (through the service's own outbox).
    await waitFor(() => watcher.received.length === 1, 10_000, "webhook.subscription_disabled");
    expect(JSON.parse(watcher.received[0]!.body)).toMatchObject({
      type: "webhook.subscription_disabled",
      account_id: account,
      data: { subscription_id: sub!.id, reason: "gone" },
    });
    expect(r.received).toHaveLength(1);
    expect(await subscription(sub!.id)).toMatchObject({
      status: SubscriptionStatus.DISABLED,
      disabledReason: DisabledReason.GONE,
    });
    const [failed] = await deliveries(sub!.id);
    expect(failed).toMatchObject({
      status: DeliveryStatus.FAILED,
      lastStatusCode: 410,
      lastError: "gone",
      attempts: 1,
    });
    const events = await h.pool.query(
      `SELECT type, resource_id, data FROM webhook.outbox WHERE type = 'webhook.subscription_disabled'`,
    );
    expect(events.rows).toEqual([
      expect.objectContaining({
        resource_id: sub!.id,
        data: expect.objectContaining({ reason: "gone" }),
      }),
    ]);
    await h.emit({ type: "number.held" });
    await sleep(400);
    expect(r.received).toHaveLength(1); // a disabled subscription gets nothing more
    // Re-enabling works; the failed delivery can be replayed.
    r.fallback = 200;
    await h.call(h.client.updateSubscription, {
      accountId: account,
      subscriptionId: sub!.id,
      status: SubscriptionStatus.ACTIVE,
    });
    await h.call(h.client.retryDelivery, { accountId: account, deliveryId: failed!.id });
    await waitFor(
      async () => (await delivery(failed!.id)).status === DeliveryStatus.DELIVERED,
      10_000,
      "replay",
    );
    expect(r.received.map((x) => x.headers["webhook-id"])).toEqual([
      failed!.eventId,
      failed!.eventId,
    ]);
  });

  it("a timeout is retried", async () => {
    const r = await receiver();
    r.script("hang", 200);
    const { subscription: sub } = await subscribe(r.url);
    await h.emit({ type: "number.released" });
    await settled(sub!.id, 1);
    const [d] = await deliveries(sub!.id);
    const log = (await delivery(d!.id)).attemptLog;
    expect(log.map((a) => [a.outcome, a.error ?? null])).toEqual([
      [AttemptOutcome.RETRYING, "timeout"],
      [AttemptOutcome.DELIVERED, null],
    ]);
    expect(log[0]!.durationMs).toBeGreaterThanOrEqual(290);
    expect(log[0]!.durationMs).toBeLessThan(1_000);
  });

  it("a receiver down for a while, then up, gets every event with a stable webhook-id", async () => {
    const r = await receiver();
    await r.close(); // connection refused from now on
    const { subscription: sub } = await subscribe(r.url);
    const ids = await Promise.all(
      Array.from({ length: 25 }, () => h.emit({ type: "number.assigned" })),
    );
    await waitFor(
      async () => (await deliveries(sub!.id)).filter((d) => d.attempts >= 1).length === 25,
      10_000,
      "first attempts",
    );
    await sleep(250); // past the first retry too
    await r.reopen();
    await settled(sub!.id, 25);
    const list = await deliveries(sub!.id);
    expect(list.every((d) => d.status === DeliveryStatus.DELIVERED)).toBe(true);
    const received = new Set(r.received.map((x) => String(x.headers["webhook-id"])));
    expect([...received].sort()).toEqual([...ids].sort());
    // at-least-once: duplicates are possible but each repeats the same id and body
    for (const id of received) {
      const copies = r.received.filter((x) => x.headers["webhook-id"] === id);
      expect(new Set(copies.map((x) => x.body)).size).toBe(1);
    }
    const first = await delivery(list[0]!.id);
    expect(first.attemptLog[0]).toMatchObject({
      outcome: AttemptOutcome.RETRYING,
      error: "connection_refused",
    });
  });

  it("exhausted → failed and kept; a retry replays it; concurrent retries start one replay", async () => {
    const r = await receiver();
    r.fallback = 503;
    const { subscription: sub } = await subscribe(r.url);
    const id = await h.emit({ type: "number.hold_expired" });
    await settled(sub!.id, 1);
    const [d] = await deliveries(sub!.id);
    expect(d).toMatchObject({
      status: DeliveryStatus.FAILED,
      attempts: 4,
      lastStatusCode: 503,
      lastError: "http_status",
    });
    expect(r.received).toHaveLength(4); // 1 + the 3 delays of the schedule

    r.fallback = 204;
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, () =>
        h.call(h.client.retryDelivery, { accountId: account, deliveryId: d!.id }),
      ),
    );
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    for (const o of outcomes) {
      if (o.status === "rejected")
        expect((o.reason as { kind: string }).kind).toBe("invalid-state");
    }
    await waitFor(
      async () => (await delivery(d!.id)).status === DeliveryStatus.DELIVERED,
      10_000,
      "replayed",
    );
    expect(r.received.map((x) => x.headers["webhook-id"])).toEqual(Array(5).fill(id));
    expect((await delivery(d!.id)).attempts).toBe(5);
    const again = await failure(
      h.call(h.client.retryDelivery, { accountId: account, deliveryId: d!.id }),
    );
    expect(again.kind).toBe("invalid-state"); // delivered is final
  });

  it("honours Retry-After", async () => {
    const r = await receiver();
    r.script({ status: 429, headers: { "retry-after": "1" } }, 200);
    const { subscription: sub } = await subscribe(r.url);
    await h.emit({ type: "number.held" });
    await settled(sub!.id, 1);
    expect(r.received).toHaveLength(2);
    expect(r.received[1]!.at - r.received[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it("does not follow redirects", async () => {
    const target = await receiver();
    const r = await receiver();
    r.script({ status: 307, headers: { location: target.url } }, 200);
    const { subscription: sub } = await subscribe(r.url);
    await h.emit({ type: "number.held" });
    await settled(sub!.id, 1);
    expect(target.received).toHaveLength(0);
    const [d] = await deliveries(sub!.id);
    expect((await delivery(d!.id)).attemptLog.map((a) => [a.statusCode, a.error ?? null])).toEqual([
      [307, "redirect"],
      [200, null],
    ]);
  });

  it("after a rotation both the old and the new secret verify, and the old one stops at its expiry", async () => {
    const r = await receiver();
    const { subscription: sub, secret: oldSecret } = await subscribe(r.url);
    const rotated = (await h.call(h.client.rotateSubscriptionSecret, {
      accountId: account,
      subscriptionId: sub!.id,
    })) as webhook.RotateSubscriptionSecretResponse;
    expect(rotated.secret).not.toBe(oldSecret);
    const expires = Date.parse(rotated.subscription!.previousSecretExpiresAt!);
    expect(expires - Date.now()).toBeGreaterThan(59 * 60_000);
    await h.emit({ type: "number.held" });
    await waitFor(() => r.received.length === 1, 10_000, "a delivery");
    const request = r.received[0]!;
    const headers = {
      "webhook-id": String(request.headers["webhook-id"]),
      "webhook-timestamp": String(request.headers["webhook-timestamp"]),
      "webhook-signature": String(request.headers["webhook-signature"]),
    };
    expect(headers["webhook-signature"].split(" ")).toHaveLength(2);
    expect(() => new Webhook(oldSecret).verify(request.body, headers)).not.toThrow();
    expect(() => new Webhook(rotated.secret).verify(request.body, headers)).not.toThrow();

    // A second rotation: the first secret stops at once; never more than two signatures.
    const second = (await h.call(h.client.rotateSubscriptionSecret, {
      accountId: account,
      subscriptionId: sub!.id,
    })) as webhook.RotateSubscriptionSecretResponse;
    await h.emit({ type: "number.held" });
    await waitFor(() => r.received.length === 2, 10_000, "a second delivery");
    const next = r.received[1]!;
    const nextHeaders = {
      "webhook-id": String(next.headers["webhook-id"]),
      "webhook-timestamp": String(next.headers["webhook-timestamp"]),
      "webhook-signature": String(next.headers["webhook-signature"]),
    };
    expect(nextHeaders["webhook-signature"].split(" ")).toHaveLength(2);
    expect(() => new Webhook(second.secret).verify(next.body, nextHeaders)).not.toThrow();
    expect(() => new Webhook(rotated.secret).verify(next.body, nextHeaders)).not.toThrow();
    expect(() => new Webhook(oldSecret).verify(next.body, nextHeaders)).toThrow();
  });

  it("re-checks the address at delivery: a host that now resolves to loopback is refused", async () => {
    const { subscription: sub } = await subscribe("https://hooks.rebind.test/hook");
    h.hosts["hooks.rebind.test"] = ["127.0.0.1"];
    await h.emit({ type: "number.held" });
    await waitFor(async () => (await deliveries(sub!.id))[0]?.attempts === 1, 10_000, "an attempt");
    const [d] = await deliveries(sub!.id);
    expect(d).toMatchObject({ lastError: "unsafe_url" });
    expect(d!.lastStatusCode).toBeUndefined();
    await h.call(h.client.deleteSubscription, { accountId: account, subscriptionId: sub!.id });
  });

  it("pausing stops deliveries; its pending ones end failed and are replayable after resuming", async () => {
    const r = await receiver();
    r.fallback = 500;
    const { subscription: sub } = await subscribe(r.url);
    await h.emit({ type: "number.held" });
    await waitFor(() => r.received.length >= 1, 10_000, "first attempt");
    await h.call(h.client.updateSubscription, {
      accountId: account,
      subscriptionId: sub!.id,
      status: SubscriptionStatus.PAUSED,
    });
    const [d] = await deliveries(sub!.id);
    expect(d).toMatchObject({ status: DeliveryStatus.FAILED, lastError: "subscription_paused" });
    await h.emit({ type: "number.held" });
    await sleep(400);
    expect(await deliveries(sub!.id)).toHaveLength(1);
    const blocked = await failure(
      h.call(h.client.retryDelivery, { accountId: account, deliveryId: d!.id }),
    );
    expect(blocked.kind).toBe("invalid-state");
    r.fallback = 200;
    await h.call(h.client.updateSubscription, {
      accountId: account,
      subscriptionId: sub!.id,
      status: SubscriptionStatus.ACTIVE,
    });
    await h.call(h.client.retryDelivery, { accountId: account, deliveryId: d!.id });
    await waitFor(
      async () => (await delivery(d!.id)).status === DeliveryStatus.DELIVERED,
      10_000,
      "replayed",
    );
  });

  it("a subscription failing past WEBHOOK_DISABLE_AFTER is disabled (failing)", async () => {
    const local = await startHarness({
      env: {
        WEBHOOK_DISABLE_AFTER: "250ms",
        WEBHOOK_RETRY_SCHEDULE: "100ms,100ms,100ms,100ms,100ms,100ms",
      },
    });
    try {
      const r = await receiver();
      r.fallback = 500;
      const { subscription: sub } = (await local.call(local.client.createSubscription, {
        accountId: account,
        url: r.url,
        events: ["*"],
      })) as webhook.CreateSubscriptionResponse;
      await local.emit({ type: "message.failed" });
      await waitFor(
        async () =>
          (
            await local.call(local.client.getSubscription, {
              accountId: account,
              subscriptionId: sub!.id,
            })
          ).subscription!.status === SubscriptionStatus.DISABLED,
        10_000,
        "disabled",
      );
      const got = await local.call(local.client.getSubscription, {
        accountId: account,
        subscriptionId: sub!.id,
      });
      expect(got.subscription!.disabledReason).toBe(DisabledReason.FAILING);
      const { rows } = await local.pool.query(
        `SELECT data FROM webhook.outbox WHERE type = 'webhook.subscription_disabled'`,
      );
      expect(rows.map((x) => x.data.reason)).toEqual(["failing"]);
    } finally {
      await local.stop();
    }
  });

  it("the same event fanned out concurrently makes one delivery per subscription", async () => {
    const r = await receiver();
    const subs = await Promise.all([
      subscribe(r.url, ["call.*"]),
      subscribe(r.url, ["call.ringing"]),
    ]);
    const event = {
      id: `evt_01${"h".repeat(24)}`,
      type: "call.ringing",
      timestamp: new Date().toISOString(),
      account_id: account,
      resource_id: "call_1",
      sequence: 2,
      data: {},
    };
    const counts = await Promise.all(
      Array.from({ length: 10 }, () => fanOut(h.running.context, event)),
    );
    expect(counts.filter((n) => n > 0).length).toBeGreaterThanOrEqual(1);
    const { rows } = await h.pool.query(
      `SELECT subscription_id FROM webhook.deliveries WHERE event_id = $1 ORDER BY subscription_id`,
      [event.id],
    );
    expect(rows.map((x) => x.subscription_id)).toEqual(subs.map((s) => s.subscription!.id).sort());
    await waitFor(
      () => r.received.filter((x) => x.headers["webhook-id"] === event.id).length >= 2,
      10_000,
      "both",
    );
  });
});
