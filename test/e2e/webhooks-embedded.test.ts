import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  startWebhookPlatform,
  type WebhookPlatform,
} from "@switchboard/test-support/fixtures/webhooks-platform";
import { startReceiver, type Receiver } from "@switchboard/test-support/fixtures/webhook-receiver";

/** The embedded mode (PGlite, in-process queue) runs the same fan-out, signing and retries. */
describe("webhooks in the embedded mode (PGlite, in-process queue)", () => {
  let p: WebhookPlatform;
  let token: string;
  let receiver: Receiver;
  beforeAll(async () => {
    p = await startWebhookPlatform({ embedded: true, seed: 100 });
    token = await p.token();
    receiver = await startReceiver({ contract: p.test.contract });
  });
  afterEach(() => expect(receiver.violations).toEqual([]));
  afterAll(async () => {
    await receiver?.close();
    await p?.stop();
  });

  const waitFor = async (check: () => boolean, what: string) => {
    const deadline = Date.now() + 15_000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  };

  it("a held number reaches the subscription (after a 500), signed", async () => {
    receiver.script(500);
    const created = await p.request("/v1/api/webhooks/subscriptions", {
      method: "POST",
      token,
      json: { url: receiver.url, events: ["number.held"] },
    });
    expect(created.status).toBe(201);
    const { secret } = (await created.json()) as { secret: string };
    const search = await p.request("/v1/api/numbers/search?limit=1", { token });
    const number = ((await search.json()) as { data: { number: string }[] }).data[0]!.number;
    expect(
      (await p.request("/v1/api/numbers/hold", { method: "POST", token, json: { number } })).status,
    ).toBe(201);
    await waitFor(() => receiver.received.length === 2, "the retried delivery");
    const [first, second] = receiver.received;
    expect(second!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
    const event = new Webhook(secret).verify(second!.body, {
      "webhook-id": String(second!.headers["webhook-id"]),
      "webhook-timestamp": String(second!.headers["webhook-timestamp"]),
      "webhook-signature": String(second!.headers["webhook-signature"]),
    }) as { type: string; data: { number: string } };
    expect(event).toMatchObject({ type: "number.held", data: { number } });
  });
});
