import { checkHealth, createHealthClient } from "@switchboard/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireTestRedis } from "@switchboard/kit/events/testing";
import { account, failure, startHarness, type Harness } from "./support/harness.js";

// npm test needs Redis (README): a Redis that is down fails this suite, never skips it.
await requireTestRedis();

/** WebhookService over gRPC on real PostgreSQL: the rules that hold without the gateway. */
describe("webhook subscriptions over gRPC", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      env: { WEBHOOK_SUBSCRIPTION_LIMIT: "3" },
      hosts: { "hooks.example.test": ["93.184.215.14"] },
    });
  });
  afterAll(() => h?.stop());

  const create = (accountId: string, metadata?: Record<string, string>) =>
    h.call(
      h.client.createSubscription,
      { accountId, url: "https://hooks.example.test/a", events: ["number.*"] },
      metadata,
    );

  it("the per-account cap holds under 12 concurrent creations", async () => {
    const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => create("acct_cap")));
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(3);
    for (const o of outcomes) {
      if (o.status === "rejected") expect((o.reason as { kind: string }).kind).toBe("conflict");
    }
    const { rows } = await h.pool.query(
      "SELECT count(*)::int AS n FROM webhook.subscriptions WHERE account_id = 'acct_cap'",
    );
    expect(rows[0].n).toBe(3);
  });

  it("an Idempotency-Key replays the creation (same secret) and refuses another body", async () => {
    const key = { "idempotency-key": "create-once" };
    const first = await create(account, key);
    const second = await create(account, key);
    expect(second.subscription!.id).toBe(first.subscription!.id);
    expect(second.secret).toBe(first.secret);
    const other = await failure(
      h.call(
        h.client.createSubscription,
        { accountId: account, url: "https://hooks.example.test/b", events: ["*"] },
        key,
      ),
    );
    expect(other.kind).toBe("idempotency-mismatch");
  });

  it("validates at the service boundary too", async () => {
    const noAccount = await failure(create(""));
    expect(noAccount.kind).toBe("validation-failed");
    expect(noAccount.meta.errors).toEqual([
      { pointer: "#/account_id", detail: "must name the account" },
    ]);
    const badId = await failure(
      h.call(h.client.getSubscription, { accountId: account, subscriptionId: "whs_nope" }),
    );
    expect(badId.kind).toBe("not-found");
    const badCursor = await failure(
      h.call(h.client.listSubscriptions, { accountId: account, limit: 0, cursor: "garbage" }),
    );
    expect(badCursor.kind).toBe("invalid-cursor");
    const { subscription } = await create(account);
    const page = await h.call(h.client.listSubscriptions, {
      accountId: account,
      limit: 1,
      cursor: "",
    });
    expect(page.hasMore).toBe(true);
    const moved = await failure(
      h.call(h.client.listDeliveries, {
        accountId: account,
        subscriptionId: subscription!.id,
        limit: 0,
        cursor: page.nextCursor,
      }),
    );
    expect(moved.kind).toBe("invalid-cursor"); // a cursor is bound to its listing
  });

  it("stores secrets sealed, never in clear, and erases them on delete", async () => {
    const { subscription, secret } = await create(account);
    const { rows } = await h.pool.query(
      "SELECT sealed FROM webhook.subscription_secrets WHERE subscription_id = $1",
      [subscription!.id],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].sealed).not.toContain(secret.slice(6, 20));
    await h.call(h.client.deleteSubscription, {
      accountId: account,
      subscriptionId: subscription!.id,
    });
    const after = await h.pool.query(
      "SELECT count(*)::int AS n FROM webhook.subscription_secrets WHERE subscription_id = $1",
      [subscription!.id],
    );
    expect(after.rows[0].n).toBe(0);
    const gone = await failure(
      h.call(h.client.rotateSubscriptionSecret, {
        accountId: account,
        subscriptionId: subscription!.id,
      }),
    );
    expect(gone.kind).toBe("not-found");
  });

  it("serves grpc.health.v1: SERVING while PostgreSQL and the queue answer", async () => {
    const health = createHealthClient(`127.0.0.1:${h.running.port}`);
    try {
      expect(await checkHealth(health)).toBe("SERVING");
    } finally {
      health.close();
    }
  });
});
