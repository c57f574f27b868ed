import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fastMessagingEnv } from "@switchboard/test-support/fixtures/messages-platform";
import {
  createConsent,
  createTemplate,
  ownNumber,
} from "@switchboard/test-support/fixtures/messages";
import { startReceiver, type Receiver } from "@switchboard/test-support/fixtures/webhook-receiver";
import {
  startWebhookPlatform,
  type WebhookPlatform,
} from "@switchboard/test-support/fixtures/webhooks-platform";

type Event = { id: string; type: string; data: { id: string; status_callback: unknown } };
type Secret = {
  subscription_id: string;
  secret: string;
  previous_secret_expires_at: string | null;
};

const waitFor = async (check: () => boolean | Promise<boolean>, what: string) => {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};
const eventsOf = (receiver: Receiver) => receiver.received.map((r) => JSON.parse(r.body) as Event);
const headersOf = (r: Receiver["received"][number]) => ({
  "webhook-id": String(r.headers["webhook-id"]),
  "webhook-timestamp": String(r.headers["webhook-timestamp"]),
  "webhook-signature": String(r.headers["webhook-signature"]),
});

/**
 * `status_callback` on calls and messages: the resource's events (only its own, only those
 * selected) reach its URL signed with the account's status-callback secret, retried like a
 * subscription's, listed in the callbacks' delivery log; an unsafe URL is refused up front.
 */
describe("status callbacks on calls and messages (PostgreSQL + Redis)", () => {
  let p: WebhookPlatform;
  let token: string;
  let ours: string;
  const receivers: Receiver[] = [];
  const receiver = async () => {
    const started = await startReceiver({ contract: p.test.contract });
    receivers.push(started);
    return started;
  };

  beforeAll(async () => {
    p = await startWebhookPlatform({
      seed: 300,
      env: {
        ...fastMessagingEnv,
        SANDBOX_CALL_SECONDS: "0.3",
        SANDBOX_RING_DELAY_MS: "50",
        CALL_TIMER_POLL_MS: "100",
      },
    });
    p.hosts["intranet.example.test"] = ["10.20.30.40"];
    token = await p.token();
    ours = await ownNumber(p, token, ["voice", "sms"]);
    expect(
      (await p.request("/v1/api/agents", { method: "POST", token, json: { name: "alice" } }))
        .status,
    ).toBe(201);
  });
  afterAll(async () => {
    for (const r of receivers) await r.close();
    await p?.stop();
  });

  const post = (path: string, json: unknown) => p.request(path, { method: "POST", token, json });
  const placeCall = (statusCallback?: unknown) =>
    post("/v1/api/calls/outbound", {
      from: ours,
      to: "+15550109990",
      agent: "alice",
      ...(statusCallback ? { status_callback: statusCallback } : {}),
    });
  const callbackSecret = async () =>
    (await (await p.request("/v1/api/webhooks/status-callback", { token })).json()) as Secret;

  it("refuses an unsafe or mismatched status_callback with a pointer, creating nothing", async () => {
    const before = (await (await p.request("/v1/api/calls", { token })).json()) as {
      data: unknown[];
    };
    const cases: [unknown, string, number, string][] = [
      [
        { url: "https://intranet.example.test/cb" },
        "#/status_callback/url",
        422,
        "unsafe-webhook-url",
      ],
      [
        { url: "http://169.254.169.254/latest" },
        "#/status_callback/url",
        422,
        "unsafe-webhook-url",
      ],
      [
        { url: "https://example.com/cb", events: ["message.sent"] },
        "#/status_callback/events/0",
        422,
        "validation-failed",
      ],
      [{ url: "https://example.com/cb", extra: 1 }, "#/status_callback", 422, "validation-failed"],
    ];
    for (const [callback, pointer, status, kind] of cases) {
      const response = await placeCall(callback);
      expect(response.status, JSON.stringify(callback)).toBe(status);
      const problem = (await response.json()) as { type: string; errors: { pointer: string }[] };
      expect(problem.type).toMatch(new RegExp(`/${kind}$`));
      expect(problem.errors.map((e) => e.pointer).some((ptr) => ptr.startsWith(pointer))).toBe(
        true,
      );
    }
    const after = (await (await p.request("/v1/api/calls", { token })).json()) as {
      data: unknown[];
    };
    expect(after.data).toHaveLength(before.data.length);
    const message = await post("/v1/api/messages/send", {
      channel: "sms",
      to: "+15550200000",
      from: ours,
      template_id: "tpl_01jd2k8w7c3q9v0m5n6p7r8s9t",
      consent_id: "cns_01jd2k8w7c3q9v0m5n6p7r8s9t",
      status_callback: { url: "https://intranet.example.test/cb" },
    });
    expect(message.status).toBe(422);
    expect(((await message.json()) as { type: string }).type).toMatch(/unsafe-webhook-url$/);
  });

  it("delivers only that call's selected events, signed with the status-callback secret, in its delivery log", async () => {
    const callbacks = await receiver();
    const placed = await placeCall({
      url: callbacks.url,
      events: ["call.answered", "call.completed"],
    });
    expect(placed.status).toBe(201);
    const call = (await placed.json()) as { id: string; status_callback: unknown };
    expect(call.status_callback).toEqual({
      url: callbacks.url,
      events: ["call.answered", "call.completed"],
    });
    // Another call without a status callback: nothing of it reaches the URL.
    expect((await placeCall()).status).toBe(201);
    await waitFor(() => callbacks.received.length >= 2, "the call's callbacks");
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(eventsOf(callbacks).map((e) => [e.type, e.data.id])).toEqual([
      ["call.answered", call.id],
      ["call.completed", call.id],
    ]);
    expect(callbacks.violations).toEqual([]);

    const secret = await callbackSecret();
    expect(secret.secret).toMatch(/^whsec_/);
    for (const request of callbacks.received) {
      expect(request.headers["switchboard-subscription-id"]).toBe(secret.subscription_id);
      expect(() =>
        new Webhook(secret.secret).verify(request.body, headersOf(request)),
      ).not.toThrow();
    }
    // The call's own delivery log: its callbacks, and nothing else.
    const log = (await (
      await p.request(
        `/v1/api/webhooks/subscriptions/${secret.subscription_id}/deliveries?resource_id=${call.id}`,
        { token },
      )
    ).json()) as { data: { event_id: string; event_type: string; status: string }[] };
    const ids = callbacks.received.map((r) => String(r.headers["webhook-id"]));
    expect(log.data.map((d) => [d.event_id, d.event_type, d.status])).toEqual([
      [ids[1], "call.completed", "delivered"],
      [ids[0], "call.answered", "delivered"],
    ]);
    // The hidden subscription is not one of the account's subscriptions.
    const listed = (await (
      await p.request("/v1/api/webhooks/subscriptions", { token })
    ).json()) as {
      data: { id: string }[];
    };
    expect(listed.data.map((s) => s.id)).not.toContain(secret.subscription_id);
  });

  it("retries a message's callbacks like a subscription's; a 410 fails that delivery only; rotation overlaps", async () => {
    const flaky = await receiver();
    flaky.script(500);
    const template = await createTemplate(p, token, "Code {{n}}", ["sms"]);
    const consent = await createConsent(p, token, "+15550200000", ["sms"]);
    const sent = await post("/v1/api/messages/send", {
      channel: "sms",
      to: "+15550200000",
      from: ours,
      template_id: template.id,
      variables: { n: "7" },
      consent_id: consent.id,
      status_callback: { url: flaky.url },
    });
    expect(sent.status).toBe(202);
    const message = (await sent.json()) as { id: string; status_callback: unknown };
    expect(message.status_callback).toEqual({ url: flaky.url, events: [] });
    const types = () => new Set(eventsOf(flaky).map((e) => e.type));
    // The first attempt was answered 500 and is retried with the same webhook-id (the three
    // events may all arrive before that retry: they are relayed together).
    const triesOfFirst = () =>
      flaky.received.filter(
        (r) => r.headers["webhook-id"] === flaky.received[0]?.headers["webhook-id"],
      );
    await waitFor(
      () =>
        ["message.queued", "message.sent", "message.delivered"].every((t) => types().has(t)) &&
        triesOfFirst().length >= 2,
      "the message's callbacks, and the retry of the first",
    );
    expect(new Set(eventsOf(flaky).map((e) => e.data.id))).toEqual(new Set([message.id]));
    expect(triesOfFirst()).toHaveLength(2);
    expect(flaky.received).toHaveLength(4); // three deliveries, one of them tried twice
    expect(flaky.violations).toEqual([]);

    // A 410 from one callback URL does not disable the account's status callbacks.
    const gone = await receiver();
    gone.fallback = 410;
    expect((await placeCall({ url: gone.url, events: ["call.completed"] })).status).toBe(201);
    await waitFor(() => gone.received.length === 1, "the 410");
    const after = await receiver();
    expect((await placeCall({ url: after.url, events: ["call.completed"] })).status).toBe(201);
    await waitFor(() => after.received.length === 1, "a callback after the 410");

    const before = await callbackSecret();
    const rotated = (await (
      await p.request("/v1/api/webhooks/status-callback/rotate-secret", { method: "POST", token })
    ).json()) as Secret;
    expect(rotated.subscription_id).toBe(before.subscription_id);
    expect(rotated.secret).not.toBe(before.secret);
    expect(rotated.previous_secret_expires_at).not.toBeNull();
    const reader = await p.token("webhooks:read");
    expect((await p.request("/v1/api/webhooks/status-callback", { token: reader })).status).toBe(
      403,
    );
  });
});
