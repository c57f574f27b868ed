import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { callUnary, createClient } from "@switchboard/kit";
import { webhook } from "@switchboard/proto";
import {
  startWebhookPlatform,
  type WebhookPlatform,
} from "@switchboard/test-support/fixtures/webhooks-platform";
import { startReceiver, type Receiver } from "@switchboard/test-support/fixtures/webhook-receiver";

type Delivery = {
  id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempts: number;
  last_status_code: number | null;
};
type Detail = Delivery & {
  attempt_log: {
    attempt: number;
    status_code: number | null;
    outcome: string;
    error: string | null;
  }[];
};

const waitFor = async (check: () => Promise<boolean>, what: string, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};
const headersOf = (r: Receiver["received"][number]) => ({
  "webhook-id": String(r.headers["webhook-id"]),
  "webhook-timestamp": String(r.headers["webhook-timestamp"]),
  "webhook-signature": String(r.headers["webhook-signature"]),
});

/** Deliveries end to end: gateway → webhook service → BullMQ → a real receiver on loopback. */
describe("webhook deliveries through the platform (PostgreSQL + Redis)", () => {
  let p: WebhookPlatform;
  let token: string;
  let receiver: Receiver;
  beforeAll(async () => {
    p = await startWebhookPlatform({ seed: 200 });
    token = await p.token();
    receiver = await startReceiver({ contract: p.test.contract });
  });
  // Every delivery matches its event's entry in the document's webhooks section.
  afterEach(() => expect(receiver.violations).toEqual([]));
  afterAll(async () => {
    await receiver?.close();
    await p?.stop();
  });

  const subscribe = async (url: string, events: string[]) => {
    const r = await p.request("/v1/api/webhooks/subscriptions", {
      method: "POST",
      token,
      json: { url, events },
    });
    expect(r.status).toBe(201);
    return (await r.json()) as { id: string; secret: string };
  };
  const deliveries = async (subscriptionId: string) =>
    (
      (await (
        await p.request(`/v1/api/webhooks/subscriptions/${subscriptionId}/deliveries`, { token })
      ).json()) as {
        data: Delivery[];
      }
    ).data;
  const detail = async (id: string) =>
    (await (await p.request(`/v1/api/webhooks/deliveries/${id}`, { token })).json()) as Detail;

  it("POST …/test delivers a signed webhook.test that verifies with the standardwebhooks library", async () => {
    const sub = await subscribe(receiver.url, ["message.delivered"]);
    const r = await p.request(`/v1/api/webhooks/subscriptions/${sub.id}/test`, {
      method: "POST",
      token,
    });
    expect(r.status).toBe(202);
    const queued = (await r.json()) as Delivery;
    expect(queued).toMatchObject({ event_type: "webhook.test", status: "pending", attempts: 0 });
    await waitFor(
      async () => (await detail(queued.id)).status === "delivered",
      "the test delivery",
    );
    const request = receiver.received.find((x) => x.headers["webhook-id"] === queued.event_id)!;
    const event = new Webhook(sub.secret).verify(request.body, headersOf(request)) as Record<
      string,
      unknown
    >;
    expect(event).toMatchObject({
      id: queued.event_id,
      type: "webhook.test",
      account_id: p.accountId,
      sequence: 1,
      data: { subscription_id: sub.id },
    });
    expect(request.headers["switchboard-subscription-id"]).toBe(sub.id);
    expect((await detail(queued.id)).attempt_log).toEqual([
      expect.objectContaining({ attempt: 1, status_code: 200, outcome: "delivered", error: null }),
    ]);
    const again = await p.request(`/v1/api/webhooks/deliveries/${queued.id}/retry`, {
      method: "POST",
      token,
    });
    expect(again.status).toBe(409);
  });

  it("an inventory event (number.held) reaches the account's subscription through the outbox and the queue", async () => {
    const sub = await subscribe(receiver.url, ["number.*"]);
    const search = await p.request("/v1/api/numbers/search?limit=1", { token });
    const number = ((await search.json()) as { data: { number: string }[] }).data[0]!.number;
    const held = await p.request("/v1/api/numbers/hold", {
      method: "POST",
      token,
      json: { number },
    });
    expect(held.status).toBe(201);
    const hold = (await held.json()) as { id: string };
    await waitFor(
      async () => (await deliveries(sub.id)).some((d) => d.status === "delivered"),
      "number.held",
    );
    const [delivery] = await deliveries(sub.id);
    const request = receiver.received.find((x) => x.headers["webhook-id"] === delivery!.event_id)!;
    const event = new Webhook(sub.secret).verify(request.body, headersOf(request)) as {
      type: string;
      data: Record<string, unknown>;
      sequence: number;
    };
    expect(event.type).toBe("number.held");
    expect(event.data).toMatchObject({ number, hold_id: hold.id });
    expect(event.sequence).toBeGreaterThanOrEqual(1);
  });

  it("a failed delivery is kept and POST …/retry replays it with the same webhook-id", async () => {
    const failing = await startReceiver({ fallback: 500, contract: p.test.contract });
    try {
      const sub = await subscribe(failing.url, ["message.delivered"]);
      const test = (await (
        await p.request(`/v1/api/webhooks/subscriptions/${sub.id}/test`, { method: "POST", token })
      ).json()) as Delivery;
      await waitFor(async () => (await detail(test.id)).status === "failed", "the failed delivery");
      const failed = await detail(test.id);
      expect(failed.attempts).toBe(3); // 1 + the two delays of this platform's schedule
      expect(failed.attempt_log.map((a) => a.outcome)).toEqual(["retrying", "retrying", "failed"]);
      const listed = await p.request(
        `/v1/api/webhooks/subscriptions/${sub.id}/deliveries?status=failed`,
        { token },
      );
      expect(((await listed.json()) as { data: Delivery[] }).data.map((d) => d.id)).toEqual([
        test.id,
      ]);

      failing.fallback = 204;
      const retried = await p.request(`/v1/api/webhooks/deliveries/${test.id}/retry`, {
        method: "POST",
        token,
      });
      expect(retried.status).toBe(202);
      expect(await retried.json()).toMatchObject({ id: test.id, status: "pending" });
      await waitFor(async () => (await detail(test.id)).status === "delivered", "the replay");
      expect(new Set(failing.received.map((x) => x.headers["webhook-id"]))).toEqual(
        new Set([test.event_id]),
      );
      expect(failing.received).toHaveLength(4);
      expect(failing.violations).toEqual([]);
    } finally {
      await failing.close();
    }
  });

  it("the internal sink (for the agent smoke) receives and verifies a signed webhook", async () => {
    const client = createClient(webhook.WebhookServiceClient, `127.0.0.1:${p.webhook.port}`);
    try {
      const call = <Req, Res>(method: Parameters<typeof callUnary<Req, Res>>[2], request: Req) =>
        callUnary<Req, Res>("webhook", client, method, request, { deadlineMs: 5_000 });
      const sink = await call<webhook.GetInternalSinkRequest, webhook.GetInternalSinkResponse>(
        client.getInternalSink,
        {
          accountId: p.accountId,
        },
      );
      expect(sink.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/sink$/);
      const created = await call<
        webhook.CreateSubscriptionRequest,
        webhook.CreateSubscriptionResponse
      >(client.createSubscription, {
        accountId: p.accountId,
        url: sink.url,
        events: ["webhook.test"],
        internalSink: true,
      });
      const sub = { id: created.subscription!.id, secret: created.secret };
      const test = (await (
        await p.request(`/v1/api/webhooks/subscriptions/${sub.id}/test`, { method: "POST", token })
      ).json()) as Delivery;
      let receipts: webhook.SinkReceipt[] = [];
      await waitFor(async () => {
        receipts = (
          await call<webhook.ListSinkReceiptsRequest, webhook.ListSinkReceiptsResponse>(
            client.listSinkReceipts,
            {
              accountId: p.accountId,
              webhookId: test.event_id,
              limit: 5,
            },
          )
        ).receipts;
        return receipts.length > 0;
      }, "a sink receipt");
      const [receipt] = receipts;
      expect(receipt).toMatchObject({
        webhookId: test.event_id,
        verified: true,
        subscriptionId: sub.id,
      });
      expect(() =>
        new Webhook(sub.secret).verify(receipt!.body, {
          "webhook-id": receipt!.webhookId,
          "webhook-timestamp": receipt!.webhookTimestamp,
          "webhook-signature": receipt!.webhookSignature,
        }),
      ).not.toThrow();
      // Another account sees none of it.
      const others = await call<webhook.ListSinkReceiptsRequest, webhook.ListSinkReceiptsResponse>(
        client.listSinkReceipts,
        {
          accountId: "acct_other",
          limit: 5,
        },
      );
      expect(others.receipts).toEqual([]);
      // From the API the sink's origin is refused, and exactly as another loopback port is, so
      // the answer does not reveal where the sink listens.
      const port = Number(new URL(sink.url).port);
      const refusal = async (url: string) => {
        const reply = await p.request("/v1/api/webhooks/subscriptions", {
          method: "POST",
          token,
          json: { url, events: ["*"] },
        });
        return {
          status: reply.status,
          detail: ((await reply.json()) as { detail: string }).detail,
        };
      };
      const sinkRefusal = await refusal(sink.url);
      expect(sinkRefusal.status).toBe(422);
      const other = `http://127.0.0.1:${port === 65535 ? port - 1 : port + 1}/sink`;
      expect(await refusal(other)).toEqual(sinkRefusal);
      // Judged by resolved address and port: `localhost:*` is listed here, yet no spelling of
      // it reaches the sink's port.
      for (const host of ["localhost", "LOCALHOST", "localhost.", "[::1]"]) {
        expect(await refusal(`http://${host}:${port}/sink`), host).toEqual(sinkRefusal);
      }
      // RFC 8215's local-use NAT64 prefix around 127.0.0.1.
      expect(await refusal("https://[64:ff9b:1::7f00:1]/")).toMatchObject({ status: 422 });
    } finally {
      client.close();
    }
  });
});
