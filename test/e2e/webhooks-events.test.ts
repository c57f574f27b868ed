import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadWebhookSettings } from "@switchboard/webhook";
import { webhookEventTypes } from "@switchboard/webhook/event-catalog";
import { fastMessagingEnv } from "@switchboard/test-support/fixtures/messages-platform";
import {
  createConsent,
  createTemplate,
  ownNumber,
  send,
} from "@switchboard/test-support/fixtures/messages";
import { startReceiver, type Receiver } from "@switchboard/test-support/fixtures/webhook-receiver";
import {
  startWebhookPlatform,
  type WebhookPlatform,
} from "@switchboard/test-support/fixtures/webhooks-platform";

type Event = { id: string; type: string; timestamp: string; data: Record<string, unknown> };

const waitFor = async (check: () => boolean | Promise<boolean>, what: () => string) => {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

/**
 * Every event type the platform delivers, produced by the real services (inventory, call-control
 * and messaging on their sandbox carriers, the webhook service) and received by a `*`
 * subscription: each delivery validates against its entry in the document's webhooks section,
 * names the subscription that signed it, and verifies with that subscription's secret.
 */
describe("every webhook event type against the document (PostgreSQL + Redis)", () => {
  let p: WebhookPlatform;
  let token: string;
  let receiver: Receiver;
  let gone: Receiver;
  let subscription: { id: string; secret: string };
  const received = () =>
    receiver.received.map((r) => ({ request: r, event: JSON.parse(r.body) as Event }));
  const seen = () => new Set(received().map((r) => r.event.type));

  beforeAll(async () => {
    p = await startWebhookPlatform({
      seed: 300,
      env: {
        ...fastMessagingEnv,
        SANDBOX_CALL_SECONDS: "0.5",
        SANDBOX_RING_DELAY_MS: "50",
        CALL_TIMER_POLL_MS: "100",
        HOLD_SWEEP_INTERVAL_MS: "200",
        WEBHOOK_SWEEP_INTERVAL: "200ms",
      },
    });
    token = await p.token();
    receiver = await startReceiver({ contract: p.test.contract });
    gone = await startReceiver({ fallback: 410 });
    const created = await p.request("/v1/api/webhooks/subscriptions", {
      method: "POST",
      token,
      json: { url: receiver.url, events: ["*"] },
    });
    expect(created.status).toBe(201);
    subscription = (await created.json()) as typeof subscription;
  });
  afterAll(async () => {
    await receiver?.close();
    await gone?.close();
    await p?.stop();
  });

  const post = (path: string, json?: unknown) =>
    p.request(path, { method: "POST", token, ...(json === undefined ? {} : { json }) });

  it("delivers all of them, each valid against its declared schema", async () => {
    // number.held, number.assigned (and a number with voice and sms for what follows).
    const ours = await ownNumber(p, token, ["voice", "sms"]);
    // number.held, number.released.
    const search = await p.request("/v1/api/numbers/search?limit=3", { token });
    const [first, second] = ((await search.json()) as { data: { number: string }[] }).data;
    const released = (await (
      await post("/v1/api/numbers/hold", { number: first!.number })
    ).json()) as {
      id: string;
    };
    expect((await post(`/v1/api/numbers/holds/${released.id}/release`)).status).toBe(200);
    // number.hold_expired: the hold's time is moved into the past; the sweeper expires it.
    const expiring = (await (
      await post("/v1/api/numbers/hold", { number: second!.number })
    ).json()) as {
      id: string;
    };
    await p.pools.inventory.query(
      "UPDATE inventory.holds SET expires_at = now() - interval '1 second' WHERE id = $1",
      [expiring.id],
    );
    // call.initiated, call.ringing, call.answered, call.completed.
    expect((await post("/v1/api/agents", { name: "alice" })).status).toBe(201);
    expect(
      (await post("/v1/api/calls/outbound", { from: ours, to: "+15550109990", agent: "alice" }))
        .status,
    ).toBe(201);
    // call.incoming: a call to a routed number rings.
    expect(
      (await post("/v1/api/routes", { name: "main line", numbers: [ours], agent: "alice" })).status,
    ).toBe(201);
    expect(
      (await post("/v1/api/sandbox/calls/inbound", { from: "+15550109991", to: ours })).status,
    ).toBe(201);
    // message.queued, message.sent, message.delivered; message.failed (sandbox digit 2).
    const template = await createTemplate(p, token, "Your code is {{n}}", ["sms"]);
    for (const to of ["+15550200000", "+15550200002"]) {
      const consent = await createConsent(p, token, to, ["sms"]);
      const sent = await send(p, token, {
        channel: "sms",
        to,
        from: ours,
        template_id: template.id,
        variables: { n: "42" },
        consent_id: consent.id,
      });
      expect(sent.status).toBe(202);
    }
    // message.received and consent.revoked: the recipient texts STOP.
    expect(
      (
        await post("/v1/api/sandbox/messages/inbound", {
          from: "+15550200000",
          to: ours,
          body: "STOP",
        })
      ).status,
    ).toBe(201);
    // webhook.test.
    expect((await post(`/v1/api/webhooks/subscriptions/${subscription.id}/test`)).status).toBe(202);
    // webhook.subscription_disabled: a subscription whose endpoint answers 410.
    const doomed = (await (
      await post("/v1/api/webhooks/subscriptions", { url: gone.url, events: ["webhook.test"] })
    ).json()) as { id: string };
    expect((await post(`/v1/api/webhooks/subscriptions/${doomed.id}/test`)).status).toBe(202);

    await waitFor(
      () => webhookEventTypes.every((type) => seen().has(type)),
      () =>
        `every event type; missing ${webhookEventTypes.filter((t) => !seen().has(t)).join(", ")}`,
    );
    expect(receiver.violations).toEqual([]);
    const verifier = new Webhook(subscription.secret);
    for (const { request } of received()) {
      expect(request.headers["switchboard-subscription-id"]).toBe(subscription.id);
      expect(() =>
        verifier.verify(request.body, {
          "webhook-id": String(request.headers["webhook-id"]),
          "webhook-timestamp": String(request.headers["webhook-timestamp"]),
          "webhook-signature": String(request.headers["webhook-signature"]),
        }),
      ).not.toThrow();
    }
  });

  const list = async (query: string, as = token) => {
    const response = await p.request(`/v1/api/events${query}`, { token: as });
    expect(response.status).toBe(200);
    return (await response.json()) as {
      data: Event[];
      next_cursor: string | null;
      has_more: boolean;
    };
  };

  it("GET /v1/api/events lists every event delivered, filters by type and time, pages, re-fetches", async () => {
    const delivered = received().filter((r) => r.event.type !== "webhook.test");
    const all: Event[] = [];
    let cursor: string | null = "";
    while (cursor !== null) {
      const page = await list(`?limit=7${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      expect(page.data.length).toBeLessThanOrEqual(7);
      all.push(...page.data);
      cursor = page.has_more ? page.next_cursor : null;
    }
    // Newest first, each exactly the delivered body; webhook.test is not an account event.
    expect(all.map((e) => e.id)).toEqual([...all.map((e) => e.id)].sort().reverse());
    const byId = new Map(all.map((e) => [e.id, e]));
    for (const { request, event } of delivered) {
      expect(byId.get(event.id), event.type).toEqual(JSON.parse(request.body));
    }
    expect(all.some((e) => e.type === "webhook.test")).toBe(false);

    const completed = await list("?type=call.completed");
    expect(completed.data.length).toBeGreaterThan(0);
    expect(completed.data.every((e) => e.type === "call.completed")).toBe(true);
    const numbers = await list("?type=number.*");
    expect(new Set(numbers.data.map((e) => e.type))).toEqual(
      new Set(["number.held", "number.released", "number.assigned", "number.hold_expired"]),
    );
    const [newest] = all;
    const older = all.find((e) => e.timestamp < newest!.timestamp)!;
    const after = await list(`?created_after=${encodeURIComponent(older.timestamp)}`);
    expect(after.data.every((e) => e.timestamp > older.timestamp)).toBe(true);
    expect(after.data.map((e) => e.id)).toContain(newest!.id);

    const one = await p.request(`/v1/api/events/${newest!.id}`, { token });
    expect(one.status).toBe(200);
    expect(await one.json()).toEqual(newest);

    // Another account sees none of them; bad filters are 422 with a pointer.
    const other = await p.token(undefined, "other");
    expect((await list("", other)).data).toEqual([]);
    expect((await p.request(`/v1/api/events/${newest!.id}`, { token: other })).status).toBe(404);
    for (const [query, pointer] of [
      ["type=calls.*", "#/query/type"],
      ["created_after=yesterday", "#/query/created_after"],
    ]) {
      const bad = await p.request(`/v1/api/events?${query}`, { token });
      expect(bad.status).toBe(422);
      const problem = (await bad.json()) as { errors: { pointer: string }[] };
      expect(problem.errors.map((e) => e.pointer)).toEqual([pointer]);
    }
    // webhooks:read, not another scope.
    const reader = await p.token("calls:read");
    expect((await p.request("/v1/api/events", { token: reader })).status).toBe(403);
  });

  it("keeps events for the retention (7 days by default, never under 3) and purges older ones", async () => {
    const payload = (id: string) =>
      JSON.stringify({
        id,
        type: "number.held",
        timestamp: "",
        account_id: p.accountId,
        sequence: 1,
        data: {},
      });
    const keep = async (id: string, age: string) =>
      p.pools.webhook.query(
        `INSERT INTO webhook.events (id, account_id, type, occurred_at, payload)
         VALUES ($1, $2, 'number.held', now() - $3::interval, $4)`,
        [id, p.accountId, age, payload(id)],
      );
    await keep("evt_00000000000000000000000001", "8 days");
    await keep("evt_00000000000000000000000002", "6 days");
    const ids = async () =>
      (
        await p.pools.webhook.query<{ id: string }>(
          "SELECT id FROM webhook.events WHERE id LIKE 'evt_0000%'",
        )
      ).rows.map((r) => r.id);
    await waitFor(
      async () => (await ids()).length === 1,
      () => "the sweeper's purge",
    );
    expect(await ids()).toEqual(["evt_00000000000000000000000002"]);
    expect(() => loadWebhookSettings({ WEBHOOK_EVENT_RETENTION: "2d" })).toThrow(
      /WEBHOOK_EVENT_RETENTION/,
    );
  });
});
