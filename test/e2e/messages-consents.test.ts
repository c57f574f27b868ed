import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startMessagingPlatform,
  type MessagingPlatform,
} from "@switchboard/test-support/fixtures/messages-platform";
import {
  createConsent,
  eventsOf,
  json,
  sandboxNumber,
  send,
  startSender,
  terminal,
  waitForMessage,
  type MessageJson,
} from "@switchboard/test-support/fixtures/messages";

interface ConsentJson {
  id: string;
  status: string;
  source: string;
  channels: string[];
  revocation_source: string | null;
  revocation_keyword: string | null;
  evidence: Record<string, unknown> | null;
}

/** Consents, opt-out keywords and the sandbox inbound route. */
describe("consents and keywords through the gateway (PostgreSQL + Redis)", () => {
  let p: MessagingPlatform;
  let token: string;
  let from: string;
  let template: { id: string };

  beforeAll(async () => {
    p = await startMessagingPlatform();
    ({ token, from, template } = await startSender(p, "News for {{name}}"));
  });
  afterAll(async () => p?.stop());

  const inbound = async (sender: string, body: string) => {
    const response = await p.request("/v1/api/sandbox/messages/inbound", {
      method: "POST",
      token,
      json: { from: sender, to: from, body },
    });
    expect(response.status).toBe(201);
    return json<MessageJson>(response);
  };
  const sendWith = (to: string, consentId: string) =>
    send(p, token, {
      channel: "sms",
      to,
      from,
      template_id: template.id,
      variables: { name: "Ada" },
      consent_id: consentId,
    });

  it("grants, lists by phone number, gets and revokes a consent (once)", async () => {
    const phone = sandboxNumber(0);
    const created = await p.request("/v1/api/consents", {
      method: "POST",
      token,
      json: {
        phone_number: phone,
        channels: ["rcs", "sms"],
        source: "verbal",
        evidence: { recording: "https://calls.example.com/r/1" },
        captured_at: "2026-11-20T10:00:00Z",
      },
    });
    expect(created.status).toBe(201);
    const consent = await json<ConsentJson & { captured_at: string }>(created);
    expect(consent).toMatchObject({
      status: "granted",
      source: "verbal",
      channels: ["sms", "rcs"],
      evidence: { recording: "https://calls.example.com/r/1" },
      captured_at: "2026-11-20T10:00:00.000Z",
    });
    expect(created.headers.get("location")).toBe(`/v1/api/consents/${consent.id}`);
    await createConsent(p, token, sandboxNumber(9));
    const listed = await p.request(`/v1/api/consents?phone_number=${encodeURIComponent(phone)}`, {
      token,
    });
    expect((await json<{ data: ConsentJson[] }>(listed)).data.map((c) => c.id)).toEqual([
      consent.id,
    ]);
    const got = await p.request(`/v1/api/consents/${consent.id}`, { token });
    expect((await json<ConsentJson>(got)).id).toBe(consent.id);
    const revoked = await p.request(`/v1/api/consents/${consent.id}/revoke`, {
      method: "POST",
      token,
    });
    expect(await json(revoked)).toMatchObject({ status: "revoked", revocation_source: "api" });
    const again = await p.request(`/v1/api/consents/${consent.id}/revoke`, {
      method: "POST",
      token,
    });
    expect(again.status).toBe(409);
    expect((await json(again)).code).toBe("INVALID_STATE");
    const types = (await eventsOf(p, consent.id)).map((e) => e.type);
    expect(types).toEqual(["consent.granted", "consent.revoked"]);
    const other = await p.otherAccountToken();
    expect((await p.request(`/v1/api/consents/${consent.id}`, { token: other })).status).toBe(404);
  });

  it("a keyed revocation whose answer the gateway lost: the retry gets the consent it revoked", async () => {
    const consent = await createConsent(p, token, sandboxNumber(0), ["sms"]);
    const revoke = () =>
      p.request(`/v1/api/consents/${consent.id}/revoke`, {
        method: "POST",
        token,
        headers: { "Idempotency-Key": `revoke-${consent.id}` },
      });
    const first = await revoke();
    expect(first.status).toBe(200);
    // What a 5xx leaves behind (a deadline passed after messaging committed): no kept answer.
    // (One database: the gateway's schema is reached through messaging's pool.)
    await p.test.pools.messaging!.query(
      "DELETE FROM gateway.idempotency_keys WHERE idempotency_key = $1",
      [`revoke-${consent.id}`],
    );
    const retried = await revoke();
    expect(retried.status).toBe(200);
    expect(await json(retried)).toEqual(await json(first));
    const types = (await eventsOf(p, consent.id)).map((e) => e.type);
    expect(types).toEqual(["consent.granted", "consent.revoked"]);
  });

  it("refuses bad consents with pointers", async () => {
    const response = await p.request("/v1/api/consents", {
      method: "POST",
      token,
      json: { phone_number: "123", channels: [], source: "rumour", captured_at: "yesterday" },
    });
    expect(response.status).toBe(422);
    const problem = await json<{ errors: { pointer: string }[] }>(response);
    expect(problem.errors.map((e) => e.pointer).sort()).toEqual([
      "#/captured_at",
      "#/channels",
      "#/phone_number",
      "#/source",
    ]);
  });

  it("STOP revokes every consent of the sender, opts them out (422 recipient-opted-out), START restores", async () => {
    const phone = sandboxNumber(0);
    const smsConsent = await createConsent(p, token, phone, ["sms"]);
    const allConsent = await createConsent(p, token, phone, ["sms", "mms", "rcs"]);
    expect((await sendWith(phone, smsConsent.id)).status).toBe(202);

    const stop = await inbound(phone, "  Stop ");
    expect(stop).toMatchObject({
      direction: "inbound",
      status: "received",
      keyword: "stop",
      from: phone,
      to: from,
    });
    expect(stop.auto_reply_id).toMatch(/^msg_/);
    for (const id of [smsConsent.id, allConsent.id]) {
      const c = await json<ConsentJson>(await p.request(`/v1/api/consents/${id}`, { token }));
      expect(c).toMatchObject({
        status: "revoked",
        revocation_source: "keyword",
        revocation_keyword: "stop",
      });
      expect((await eventsOf(p, id)).map((e) => e.type)).toEqual([
        "consent.granted",
        "consent.revoked",
      ]);
    }
    // The opt-out confirmation goes out, without consent, from the number that got STOP.
    const reply = await waitForMessage(
      p,
      token,
      stop.auto_reply_id as string,
      terminal(["delivered", "failed"]),
    );
    expect(reply).toMatchObject({
      status: "delivered",
      from,
      to: phone,
      in_reply_to: stop.id,
      template_id: null,
    });

    const refused = await sendWith(phone, allConsent.id);
    expect(refused.status).toBe(422);
    expect((await json(refused)).code).toBe("RECIPIENT_OPTED_OUT");
    // A new API consent does not lift a STOP: it is refused at creation, not granted and then
    // unusable, and nothing is recorded.
    const before = await p.request(`/v1/api/consents?phone_number=${encodeURIComponent(phone)}`, {
      token,
    });
    const fresh = await p.request("/v1/api/consents", {
      method: "POST",
      token,
      json: { phone_number: phone, channels: ["sms"], source: "web_form" },
    });
    expect(fresh.status).toBe(422);
    expect(await json(fresh)).toMatchObject({
      code: "RECIPIENT_OPTED_OUT",
      detail: expect.stringContaining("START") as unknown,
    });
    const after = await p.request(`/v1/api/consents?phone_number=${encodeURIComponent(phone)}`, {
      token,
    });
    expect(await json(after)).toEqual(await json(before));

    const start = await inbound(phone, "START");
    expect(start.keyword).toBe("start");
    const granted = await p.request(
      `/v1/api/consents?phone_number=${encodeURIComponent(phone)}&status=granted`,
      { token },
    );
    const keywordConsents = (await json<{ data: ConsentJson[] }>(granted)).data.filter(
      (c) => c.source === "keyword",
    );
    expect(keywordConsents).toHaveLength(1);
    // START grants anew the channels STOP revoked.
    expect(keywordConsents[0]).toMatchObject({
      channels: ["sms", "mms", "rcs"],
      evidence: { inbound_message_id: start.id, keyword: "start" },
    });
    const restored = await sendWith(phone, keywordConsents[0]!.id);
    expect(restored.status).toBe(202);
    // Opted back in, the recipient can be given consents by the API again.
    await createConsent(p, token, phone, ["sms"]);
    const message = await json<MessageJson>(restored);
    expect(
      (await waitForMessage(p, token, message.id, terminal(["delivered", "failed"]))).status,
    ).toBe("delivered");
  });

  it.each(["STOPALL", "unsubscribe", "Cancel", "END", "quit"])(
    "%s opts out too",
    async (keyword) => {
      const phone = sandboxNumber(0);
      const consent = await createConsent(p, token, phone);
      const received = await inbound(phone, keyword);
      expect(received.keyword).toBe(keyword.toLowerCase());
      const refused = await sendWith(phone, consent.id);
      expect((await json(refused)).code).toBe("RECIPIENT_OPTED_OUT");
      const unstop = await inbound(phone, "unstop");
      expect(unstop.keyword).toBe("unstop");
    },
  );

  it("HELP is answered with the account's help text; other texts are just received", async () => {
    const phone = sandboxNumber(0);
    const set = await p.request("/v1/api/messaging/settings", {
      method: "PATCH",
      token,
      json: { help_text: "Acme Alerts: help at acme.example. Reply STOP to opt out." },
    });
    expect(set.status).toBe(200);
    expect(await json(set)).toMatchObject({
      help_text: "Acme Alerts: help at acme.example. Reply STOP to opt out.",
    });
    const help = await inbound(phone, "help");
    const reply = await waitForMessage(
      p,
      token,
      help.auto_reply_id as string,
      terminal(["delivered", "failed"]),
    );
    expect(reply.body).toBe("Acme Alerts: help at acme.example. Reply STOP to opt out.");
    const plain = await inbound(phone, "Thanks, see you at 5!");
    expect(plain).toMatchObject({
      keyword: null,
      auto_reply_id: null,
      status: "received",
      body: "Thanks, see you at 5!",
    });
    const received = (await eventsOf(p, plain.id)).map((e) => [e.type, e.data.body]);
    expect(received).toEqual([["message.received", "Thanks, see you at 5!"]]);
    const reset = await p.request("/v1/api/messaging/settings", {
      method: "PATCH",
      token,
      json: { help_text: "" },
    });
    expect((await json<{ help_text: string }>(reset)).help_text).toContain("Reply STOP");
  });

  it("a message queued before STOP is not sent after it", async () => {
    const phone = sandboxNumber(0);
    const consent = await createConsent(p, token, phone);
    // The sender's next turn 2 s away keeps the message queued while the STOP arrives.
    await p.pool.query(
      "INSERT INTO messaging.sender_submits (sender, tat) VALUES ($1, now() + interval '2 seconds') ON CONFLICT (sender) DO UPDATE SET tat = now() + interval '2 seconds'",
      [from],
    );
    const accepted = await json<MessageJson>(await sendWith(phone, consent.id));
    await inbound(phone, "STOP");
    const done = await waitForMessage(
      p,
      token,
      accepted.id,
      terminal(["delivered", "failed"]),
      10_000,
    );
    expect(done).toMatchObject({
      status: "failed",
      error_code: "recipient-opted-out",
      sent_at: null,
    });
  });

  it("the sandbox route needs the account's own number", async () => {
    const response = await p.request("/v1/api/sandbox/messages/inbound", {
      method: "POST",
      token,
      json: { from: sandboxNumber(0), to: "+14155550000", body: "hi" },
    });
    expect(response.status).toBe(422);
    expect((await json<{ errors: { pointer: string }[] }>(response)).errors[0]?.pointer).toBe(
      "#/to",
    );
  });
});
