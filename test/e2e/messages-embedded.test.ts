import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startMessagingPlatform,
  type MessagingPlatform,
} from "@switchboard/test-support/fixtures/messages-platform";
import {
  createConsent,
  createTemplate,
  eventsOf,
  json,
  ownNumber,
  sandboxNumber,
  send,
  terminal,
  waitForMessage,
  type MessageJson,
} from "@switchboard/test-support/fixtures/messages";

/** The embedded mode (PGlite + the in-process bus) runs the same messaging pipeline. */
describe("messaging in the embedded mode (PGlite, in-process queue)", () => {
  let p: MessagingPlatform;
  let token: string;

  beforeAll(async () => {
    p = await startMessagingPlatform({ embedded: true, seed: 600 });
    token = await p.token();
  });
  afterAll(async () => p?.stop());

  it("sends, retries after a lost answer without a second send, and honours STOP", async () => {
    const from = await ownNumber(p, token, ["sms"]);
    const template = await createTemplate(p, token, "Ping {{n}}", ["sms"]);
    const results: MessageJson[] = [];
    for (const digit of [0, 5]) {
      const to = sandboxNumber(digit);
      const consent = await createConsent(p, token, to, ["sms"]);
      const response = await send(p, token, {
        channel: "sms",
        to,
        from,
        template_id: template.id,
        variables: { n: "1" },
        consent_id: consent.id,
      });
      expect(response.status).toBe(202);
      const accepted = await json<MessageJson>(response);
      results.push(
        await waitForMessage(
          p,
          token,
          accepted.id,
          terminal(["delivered", "failed", "undelivered"]),
        ),
      );
    }
    expect(results.map((m) => m.status)).toEqual(["delivered", "delivered"]);
    const { rows } = await p.pool.query(
      "SELECT submit_calls FROM messaging.sandbox_network WHERE client_ref = $1",
      [results[1]!.id],
    );
    expect(rows).toEqual([{ submit_calls: 2 }]);
    expect(
      (await eventsOf(p, results[1]!.id)).filter((e) => e.type === "message.sent"),
    ).toHaveLength(1);

    const phone = results[0]!.to;
    const stop = await p.request("/v1/api/sandbox/messages/inbound", {
      method: "POST",
      token,
      json: { from: phone, to: from, body: "STOP" },
    });
    expect(stop.status).toBe(201);
    // A new consent for an opted-out recipient is refused until they send START (docs/api.md).
    const refused = await p.request("/v1/api/consents", {
      method: "POST",
      token,
      json: { phone_number: phone, channels: ["sms"], source: "web_form" },
    });
    expect(refused.status).toBe(422);
    expect((await json(refused)).code).toBe("RECIPIENT_OPTED_OUT");
  });
});
