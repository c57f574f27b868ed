import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callUnary, createClient } from "@switchboard/kit";
import { messaging } from "@switchboard/proto";
import {
  startMessagingPlatform,
  type MessagingPlatform,
} from "@switchboard/test-support/fixtures/messages-platform";
import {
  createConsent,
  createTemplate,
  ended,
  eventsOf,
  json,
  sandboxNumber,
  send,
  startSender,
  terminal,
  waitForMessage,
  type MessageJson,
} from "@switchboard/test-support/fixtures/messages";

/** docs/api.md "Messages": each sandbox outcome, RCS fallback, MMS, events and reads. */
describe("sending messages through the gateway (PostgreSQL + Redis)", () => {
  let p: MessagingPlatform;
  let token: string;
  let from: string;
  let template: { id: string; version: number };

  beforeAll(async () => {
    p = await startMessagingPlatform();
    ({ token, from, template } = await startSender(p, "Hi {{name}}, your code is {{code}}."));
  });
  afterAll(async () => p?.stop());

  async function sendTo(to: string, extra: Record<string, unknown> = {}, channels?: string[]) {
    const consent = await createConsent(p, token, to, channels);
    const response = await send(p, token, {
      channel: "sms",
      to,
      from,
      template_id: template.id,
      variables: { name: "Ada", code: "123456" },
      consent_id: consent.id,
      ...extra,
    });
    expect(response.status).toBe(202);
    expect(response.headers.get("location")).toMatch(/^\/v1\/api\/messages\/msg_/);
    return json<MessageJson>(response);
  }

  it("…0 is delivered: queued → sending → sent → delivered, each with its event and sequence", async () => {
    const accepted = await sendTo(sandboxNumber(0));
    expect(accepted).toMatchObject({
      status: "queued",
      channel: "sms",
      channel_used: null,
      encoding: "GSM-7",
      segments: 1,
      body: "Hi Ada, your code is 123456.",
      template_version: 1,
    });
    const done = await waitForMessage(p, token, accepted.id, ended);
    expect(done).toMatchObject({ status: "delivered", channel_used: "sms", error_code: null });
    expect(done.sent_at).not.toBeNull();
    expect(done.delivered_at).not.toBeNull();
    const events = await eventsOf(p, accepted.id);
    expect(events.map((e) => [e.type, e.sequence])).toEqual([
      ["message.queued", 1],
      ["message.sending", 2],
      ["message.sent", 3],
      ["message.delivered", 4],
    ]);
    // The usage fact: message.sent carries quantity = segments.
    expect(events[2]?.data).toMatchObject({
      quantity: 1,
      unit: "segment",
      segments: 1,
      status: "sent",
    });
    // Bodies stay out of the outbound events.
    expect(events.every((e) => !("body" in e.data))).toBe(true);
  });

  it("…1 is undelivered after it was sent", async () => {
    const accepted = await sendTo(sandboxNumber(1));
    const done = await waitForMessage(p, token, accepted.id, ended);
    expect(done).toMatchObject({ status: "undelivered", error_code: "handset-unreachable" });
    expect(done.sent_at).not.toBeNull();
  });

  it("…2 fails: the network refuses it at submit, it is never sent and never billed", async () => {
    const accepted = await sendTo(sandboxNumber(2));
    const done = await waitForMessage(p, token, accepted.id, ended);
    expect(done).toMatchObject({
      status: "failed",
      error_code: "destination-rejected",
      sent_at: null,
    });
    const types = (await eventsOf(p, accepted.id)).map((e) => e.type);
    expect(types).toEqual(["message.queued", "message.sending", "message.failed"]);
  });

  it("counts segments of the rendered body: long GSM-7 text, then UCS-2", async () => {
    const long = await createTemplate(p, token, "{{text}}", ["sms", "mms", "rcs"]);
    const to = sandboxNumber(0);
    const consent = await createConsent(p, token, to);
    const cases: [string, string, number][] = [
      ["a".repeat(159) + "€", "GSM-7", 2],
      ["€".repeat(80), "GSM-7", 1],
      ["Grüße 😀", "UCS-2", 1],
      ["ж".repeat(135), "UCS-2", 3],
    ];
    for (const [text, encoding, segments] of cases) {
      const response = await send(p, token, {
        channel: "sms",
        to,
        from,
        template_id: long.id,
        variables: { text },
        consent_id: consent.id,
      });
      expect(response.status).toBe(202);
      expect(await json(response)).toMatchObject({ encoding, segments });
    }
  });

  it("sends MMS with media (one message) and RCS, which is delivered then read", async () => {
    const mms = await sendTo(sandboxNumber(0), {
      channel: "mms",
      media_urls: ["https://cdn.example.com/a.jpg", "https://cdn.example.com/b.png"],
    });
    expect(mms).toMatchObject({
      channel: "mms",
      segments: 1,
      media_urls: ["https://cdn.example.com/a.jpg", "https://cdn.example.com/b.png"],
    });
    expect((await waitForMessage(p, token, mms.id, ended)).status).toBe("delivered");

    const rcs = await sendTo(sandboxNumber(7), { channel: "rcs" });
    const read = await waitForMessage(
      p,
      token,
      rcs.id,
      terminal(["read", "failed", "undelivered"]),
    );
    expect(read).toMatchObject({ status: "read", channel_used: "rcs", fallback_applied: false });
    expect(read.read_at).not.toBeNull();
    const types = (await eventsOf(p, rcs.id)).map((e) => e.type);
    expect(types).toEqual([
      "message.queued",
      "message.sending",
      "message.sent",
      "message.delivered",
      "message.read",
    ]);
  });

  it("RCS to a recipient that is not RCS-capable falls back to SMS, recorded on the message", async () => {
    const longText = "x".repeat(200);
    const tpl = await createTemplate(p, token, "{{t}}");
    const to = sandboxNumber(3);
    const consent = await createConsent(p, token, to);
    const response = await send(p, token, {
      channel: "rcs",
      fallback: "sms",
      to,
      from,
      template_id: tpl.id,
      variables: { t: longText },
      consent_id: consent.id,
    });
    expect(response.status).toBe(202);
    const accepted = await json<MessageJson>(response);
    expect(accepted).toMatchObject({ channel: "rcs", fallback: "sms", segments: 1 });
    const done = await waitForMessage(p, token, accepted.id, ended);
    // Sent as SMS: channel_used, fallback_applied and the SMS segment count are recorded.
    expect(done).toMatchObject({
      status: "delivered",
      channel: "rcs",
      channel_used: "sms",
      fallback_applied: true,
      segments: 2,
    });
    const sent = (await eventsOf(p, accepted.id)).find((e) => e.type === "message.sent");
    expect(sent?.data).toMatchObject({ channel_used: "sms", fallback_applied: true, quantity: 2 });
  });

  it("RCS to a recipient that is not RCS-capable, without fallback, fails", async () => {
    const accepted = await sendTo(sandboxNumber(3), { channel: "rcs" });
    const done = await waitForMessage(p, token, accepted.id, ended);
    expect(done).toMatchObject({
      status: "failed",
      error_code: "rcs-not-capable",
      fallback_applied: false,
    });
  });

  it("terminal states never change, even written directly", async () => {
    const accepted = await sendTo(sandboxNumber(2));
    await waitForMessage(p, token, accepted.id, ended);
    await expect(
      p.pool.query("UPDATE messaging.messages SET status = 'delivered' WHERE id = $1", [
        accepted.id,
      ]),
    ).rejects.toThrow(/cannot become delivered/);
  });

  it("lists the account's messages newest first with filters and pagination; another account sees 404", async () => {
    const to = sandboxNumber(0);
    const first = await sendTo(to);
    const second = await sendTo(to);
    const page1 = await p.request(`/v1/api/messages?to=${encodeURIComponent(to)}&limit=1`, {
      token,
    });
    expect(page1.status).toBe(200);
    const body1 = await json<{ data: MessageJson[]; has_more: boolean; next_cursor: string }>(
      page1,
    );
    expect(body1.data.map((m) => m.id)).toEqual([second.id]);
    expect(body1.has_more).toBe(true);
    expect(page1.headers.get("link")).toContain('rel="next"');
    const page2 = await p.request(
      `/v1/api/messages?to=${encodeURIComponent(to)}&limit=1&cursor=${encodeURIComponent(body1.next_cursor)}`,
      { token },
    );
    expect((await json<{ data: MessageJson[] }>(page2)).data.map((m) => m.id)).toEqual([first.id]);
    const otherFilter = await p.request(
      `/v1/api/messages?status=failed&cursor=${encodeURIComponent(body1.next_cursor)}`,
      {
        token,
      },
    );
    expect(otherFilter.status).toBe(400);
    expect((await json(otherFilter)).code).toBe("INVALID_CURSOR");

    const other = await p.otherAccountToken();
    const hidden = await p.request(`/v1/api/messages/${first.id}`, { token: other });
    expect(hidden.status).toBe(404);
    expect((await json(hidden)).code).toBe("NOT_FOUND");
    const otherList = await p.request("/v1/api/messages", { token: other });
    expect((await json<{ data: unknown[] }>(otherList)).data).toEqual([]);
  });

  it("one Idempotency-Key sends one message, also when the gateway's key store is lost", async () => {
    const to = sandboxNumber(0);
    const consent = await createConsent(p, token, to);
    const payload = {
      channel: "sms",
      to,
      from,
      template_id: template.id,
      variables: { name: "B", code: "1" },
      consent_id: consent.id,
    };
    const key = `msg-key-${Date.now()}`;
    const responses = await Promise.all(
      Array.from({ length: 8 }, () => send(p, token, payload, { "Idempotency-Key": key })),
    );
    const ids = new Set<string>();
    for (const response of responses) {
      expect(response.status).toBe(202);
      ids.add((await json<MessageJson>(response)).id);
    }
    expect(ids.size).toBe(1);
    // The gateway's store forgets the key; the service still recognises it.
    await p.platform.gateway.pool.query("DELETE FROM gateway.idempotency_keys");
    const again = await send(p, token, payload, { "Idempotency-Key": key });
    expect(again.status).toBe(202);
    expect((await json<MessageJson>(again)).id).toBe([...ids][0]);
    const mismatch = await send(
      p,
      token,
      { ...payload, variables: { name: "C", code: "1" } },
      { "Idempotency-Key": key },
    );
    expect(mismatch.status).toBe(409);
    expect((await json(mismatch)).code).toBe("IDEMPOTENCY_MISMATCH");
    const { rows } = await p.pool.query(
      "SELECT count(*)::int AS n FROM messaging.messages WHERE idempotency_key = $1",
      [key],
    );
    expect(rows[0].n).toBe(1);
  });

  it("the service itself keeps one key to one message under 20 concurrent gRPC calls", async () => {
    const client = createClient(messaging.MessagingServiceClient, `127.0.0.1:${p.messaging.port}`);
    try {
      const to = sandboxNumber(0);
      const consent = await createConsent(p, token, to);
      const request: messaging.SendMessageRequest = {
        accountId: p.accountId,
        channel: messaging.Channel.SMS,
        to,
        from,
        templateId: template.id,
        variables: { name: "G", code: "7" },
        consentId: consent.id,
        mediaUrls: [],
      };
      const key = `grpc-key-${Date.now()}`;
      const results = await Promise.all(
        Array.from({ length: 20 }, () =>
          callUnary("messaging", client, client.sendMessage, request, {
            metadata: { "idempotency-key": key },
          }),
        ),
      );
      expect(new Set(results.map((r) => r.message?.id)).size).toBe(1);
      const { rows } = await p.pool.query(
        "SELECT count(*)::int AS n FROM messaging.messages WHERE idempotency_key = $1",
        [key],
      );
      expect(rows[0].n).toBe(1);
      const queued = await p.pool.query(
        "SELECT count(*)::int AS n FROM messaging.outbox WHERE resource_id = $1 AND type = 'message.queued'",
        [results[0]?.message?.id],
      );
      expect(queued.rows[0].n).toBe(1);
    } finally {
      client.close();
    }
  });
});
