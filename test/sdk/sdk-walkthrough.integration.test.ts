import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  createSwitchboard,
  paginate,
  SwitchboardProblem,
  unwrap,
  verifyWebhook,
  type Switchboard,
} from "@switchboard/sdk";
import { startReceiver, type Receiver } from "@switchboard/test-support/fixtures/webhook-receiver";
import { startTestPlatform, type TestPlatform } from "@switchboard/test-support/platform";

const waitFor = async (check: () => boolean, what: string, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

/**
 * The README's walkthrough, through @switchboard/sdk on a real platform (PostgreSQL, Redis):
 * token, a seat, search, hold, assign to the seat, list; an agent, a call and its usage; a template, a consent and a message;
 * a webhook subscription whose deliveries verify with the SDK. Problems arrive as typed errors.
 */
describe("the README walkthrough through @switchboard/sdk", () => {
  let p: TestPlatform;
  let sb: Switchboard;
  let receiver: Receiver;

  beforeAll(async () => {
    p = await startTestPlatform({
      database: "postgres",
      redis: true,
      seed: 300,
      serviceEnv: {
        WEBHOOK_ALLOW_PRIVATE_HOSTS: "localhost:*",
        SANDBOX_CALL_SECONDS: "0.5",
        SANDBOX_RING_DELAY_MS: "20",
        SANDBOX_RECEIPT_DELAY_MS: "50",
      },
    });
    receiver = await startReceiver();
    sb = createSwitchboard({ baseUrl: p.url, clientId: p.clientId, clientSecret: p.clientSecret });
  });
  afterAll(async () => {
    await receiver?.close();
    await p?.stop();
  });

  it("runs token → seat → search → hold → assign → list → call → usage → message → webhook", async () => {
    const { api } = sb;
    const subscription = unwrap(
      await api.POST("/v1/api/webhooks/subscriptions", {
        body: { url: receiver.url, events: ["number.*", "call.*", "message.*"] },
      }),
    );
    expect(subscription.secret).toMatch(/^whsec_/);

    // A seat first: the numbers are assigned to it (hold + assign {seat_id}), as README says.
    const seat = unwrap(await api.POST("/v1/api/seats", { body: { name: "front desk" } }));
    const widened = unwrap(
      await api.PATCH("/v1/api/seats/{seat_id}", {
        params: { path: { seat_id: seat.id } },
        body: { max_concurrent_calls: 2 },
      }),
    );
    expect(widened.max_concurrent_calls).toBe(2);

    const found = unwrap(
      await api.GET("/v1/api/numbers/search", {
        params: { query: { region: "CA", capabilities: "voice,sms", limit: 2 } },
      }),
    );
    expect(found.data.length).toBe(2);
    for (const candidate of found.data) {
      const hold = unwrap(
        await api.POST("/v1/api/numbers/hold", { body: { number: candidate.number } }),
      );
      unwrap(
        await api.POST("/v1/api/numbers/holds/{hold_id}/assign", {
          params: { path: { hold_id: hold.id } },
          body: { seat_id: seat.id },
        }),
      );
    }
    const mine: string[] = [];
    for await (const owned of paginate((cursor) =>
      api
        .GET("/v1/api/numbers", { params: { query: { limit: 1, ...(cursor ? { cursor } : {}) } } })
        .then(unwrap),
    )) {
      mine.push(owned.number);
    }
    expect(mine.sort()).toEqual(found.data.map((n) => n.number).sort());
    const from = mine[0]!;

    // A problem is a typed error: the same number cannot be held again.
    const refused = await api
      .POST("/v1/api/numbers/hold", { body: { number: from } })
      .then(unwrap)
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SwitchboardProblem);
    expect((refused as SwitchboardProblem).kind).toBe("number-unavailable");

    unwrap(await api.POST("/v1/api/agents", { body: { name: "alice" } }));
    // The common calls have helpers that throw problems themselves.
    const call = await sb.calls.place({ to: "+15550100000", from, agent: "alice" });
    expect(call.id).toMatch(/^call_/);
    expect(call.seat_id).toBe(seat.id);

    // Usage: every reply lands a signed api.request record before it is sent.
    const usage = await sb.usage.list({ kind: "api.request", limit: 5 });
    expect(usage.data.length).toBeGreaterThan(0);
    expect(usage.data.every((event) => event.kind === "api.request")).toBe(true);
    // Iterated, the listing follows next_cursor across pages of 2.
    const seen: string[] = [];
    for await (const record of sb.usage.list({ kind: "api.request", limit: 2 })) {
      seen.push(record.id);
      if (seen.length === 5) break;
    }
    expect(new Set(seen).size).toBe(5);

    const template = unwrap(
      await api.POST("/v1/api/templates", {
        body: { name: "otp", channels: ["sms"], body: "Your code is {{code}}" },
      }),
    );
    const consent = unwrap(
      await api.POST("/v1/api/consents", {
        body: { phone_number: "+15550200000", channels: ["sms"], source: "web_form" },
      }),
    );
    const message = await sb.messages.send({
      channel: "sms",
      to: "+15550200000",
      from,
      template_id: template.id,
      variables: { code: "123456" },
      consent_id: consent.id,
    });
    expect(message.status).toBe("queued");

    // Deliveries verify with the SDK (and a tampered body does not).
    await waitFor(
      () =>
        receiver.received.some((r) => r.body.includes(message.id) && r.body.includes("delivered")),
      "message.delivered at the receiver",
    );
    for (const delivery of receiver.received) {
      const event = await verifyWebhook<{ type: string }>(
        subscription.secret,
        delivery.headers,
        delivery.body,
      );
      expect(event.type).toMatch(/^(number|call|message)\./);
    }
    const first = receiver.received[0]!;
    await expect(
      verifyWebhook(subscription.secret, first.headers, `${first.body} `),
    ).rejects.toThrow();
  });
});
