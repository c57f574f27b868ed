import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

type Event = { id: string; type: string; data: Record<string, unknown> };

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
});
