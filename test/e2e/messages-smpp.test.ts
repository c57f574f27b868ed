import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestSmsc, type TestSmsc } from "@switchboard/test-smsc";
import {
  startMessagingPlatform,
  type MessagingPlatform,
} from "@switchboard/test-support/fixtures/messages-platform";
import {
  createConsent,
  ended,
  json,
  send,
  startSender,
  waitForMessage,
  type MessageJson,
} from "@switchboard/test-support/fixtures/messages";
import { smppSegmentCases } from "@switchboard/test-support/smpp-segment-cases";
import { eventually } from "@switchboard/test-support/waiting";
import {
  handset as recipient,
  smppEnv,
  smscCredentials,
} from "@switchboard/test-support/fixtures/smpp";

/** The whole message walkthrough over SMPP: a real bind to an SMSC on loopback. */
describe("the smpp carrier against an SMSC (PostgreSQL + Redis)", () => {
  let smsc: TestSmsc;
  let p: MessagingPlatform;
  let token: string;
  let from: string;
  let template: { id: string };

  beforeAll(async () => {
    smsc = await startTestSmsc({ ...smscCredentials, receiptDelayMs: 20 });
    p = await startMessagingPlatform({ env: smppEnv(smsc) });
    ({ token, from, template } = await startSender(p, "{{text}}"));
  });
  afterAll(async () => {
    await p?.stop();
    await smsc?.stop();
  });

  async function sendText(to: string, text: string, extra: Record<string, unknown> = {}) {
    const consent = await createConsent(p, token, to);
    const response = await send(p, token, {
      channel: "sms",
      to,
      from,
      template_id: template.id,
      variables: { text },
      consent_id: consent.id,
      ...extra,
    });
    expect(response.status).toBe(202);
    return json<MessageJson>(response);
  }

  const submitsTo = (to: string) => smsc.submits.filter((s) => `+${s.destination}` === to);

  it("binds as a transceiver with the configured system_id and keeps the bind alive", async () => {
    await smsc.waitFor((s) => s.bound() > 0);
    // SMPP_ENQUIRE_LINK_MS is 2 s here.
    await smsc.waitFor(
      (s) => s.pdus.some((pdu) => pdu.direction === "in" && pdu.command === "enquire_link"),
      5_000,
    );
    expect(smsc.binds.filter((b) => b.status === 0)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ command: "bind_transceiver", systemId: "switchboard" }),
      ]),
    );
  });

  it.each(smppSegmentCases)(
    "$name: the API's segments are the submit_sm parts the SMSC receives",
    async (row) => {
      const to = recipient(0);
      const accepted = await sendText(to, row.text);
      expect({ encoding: accepted.encoding, segments: accepted.segments }).toEqual({
        encoding: row.encoding,
        segments: row.segments,
      });
      const message = await waitForMessage(p, token, accepted.id, ended);
      expect(message.status).toBe("delivered");
      const parts = submitsTo(to);
      expect(parts).toHaveLength(row.segments);
      expect(parts.every((part) => part.dataCoding === (row.encoding === "GSM-7" ? 0 : 8))).toBe(
        true,
      );
      if (row.segments > 1) {
        expect(parts.map((part) => [part.udh?.total, part.udh?.seq])).toEqual(
          parts.map((_, index) => [row.segments, index + 1]),
        );
        expect(new Set(parts.map((part) => part.udh?.ref)).size).toBe(1);
      } else {
        expect(parts[0]?.udh).toBeUndefined();
      }
      expect(parts.map((part) => part.text).join("")).toBe(row.text);
      const { rows } = await p.pool.query<{ provider_message_id: string }>(
        "SELECT provider_message_id FROM messaging.messages WHERE id = $1",
        [accepted.id],
      );
      expect(rows[0]?.provider_message_id).toBe(parts[0]?.messageId);
    },
  );

  it.each([
    [0, "delivered", null],
    [1, "undelivered", "smpp-undeliv"],
    [2, "failed", "smpp-rejectd"],
    [3, "expired", "smpp-expired"],
    [4, "failed", "smpp-deleted"],
    [5, "failed", "smpp-unknown"],
  ])(
    "a receipt for a destination ending %i moves the message to %s",
    async (digit, status, code) => {
      const accepted = await sendText(recipient(digit), `receipt ${digit}`);
      const message = await waitForMessage(p, token, accepted.id, ended);
      expect(message.status).toBe(status);
      expect(message.error_code ?? null).toBe(code);
    },
  );

  it("a refused destination fails at once with the SMPP status kept (ESME_RINVDSTADR)", async () => {
    const to = recipient(7);
    const accepted = await sendText(to, "nobody home");
    const message = await waitForMessage(p, token, accepted.id, ended);
    expect(message).toMatchObject({ status: "failed", error_code: "smpp-0x0000000b" });
    expect(submitsTo(to)).toHaveLength(0);
    expect(smsc.refused.filter((r) => `+${r.destination}` === to)).toHaveLength(1);
  });

  it.each([
    [6, "ESME_RTHROTTLED"],
    [8, "ESME_RMSGQFUL"],
  ])("a destination ending %i (%s once) is slowed down and sent once", async (digit) => {
    const to = recipient(digit);
    const accepted = await sendText(to, "patience");
    const message = await waitForMessage(p, token, accepted.id, ended);
    expect(message.status).toBe("delivered");
    expect(submitsTo(to)).toHaveLength(1);
  });

  it("RCS goes as SMS where `fallback` allows it; MMS, and RCS without an SMS fallback, get 422 channel-unavailable and store nothing", async () => {
    const to = recipient(0);
    const consent = await createConsent(p, token, to);
    const base = {
      to,
      from,
      template_id: template.id,
      variables: { text: "a card, in words" },
      consent_id: consent.id,
    };
    const refusals = [
      { ...base, channel: "mms", media_urls: ["https://example.com/cat.png"] },
      { ...base, channel: "rcs" },
      { ...base, channel: "rcs", fallback: "mms" },
    ];
    for (const body of refusals) {
      const refused = await send(p, token, body);
      expect(refused.status).toBe(422);
      expect(await refused.json()).toMatchObject({
        type: expect.stringMatching(/channel-unavailable$/),
        channel: body.channel,
      });
    }
    const withFallback = await send(p, token, { ...base, channel: "rcs", fallback: "sms" });
    expect(withFallback.status).toBe(202);
    const accepted = await json<MessageJson>(withFallback);
    const message = await waitForMessage(p, token, accepted.id, ended);
    expect(message).toMatchObject({
      status: "delivered",
      channel_used: "sms",
      fallback_applied: true,
    });
    expect(submitsTo(to).map((s) => s.text)).toEqual(["a card, in words"]);
    const { rows } = await p.pool.query(
      "SELECT count(*)::int AS n FROM messaging.messages WHERE to_number = $1",
      [to],
    );
    expect(rows[0]).toEqual({ n: 1 });
  });

  async function inbound(fromNumber: string) {
    const { rows } = await p.pool.query<{ body: string; keyword: string | null }>(
      "SELECT body, keyword FROM messaging.messages WHERE direction = 'inbound' AND from_number = $1",
      [fromNumber],
    );
    return rows;
  }

  it("an MO STOP revokes the sender's consent, is answered after the commit, and is confirmed", async () => {
    const phone = recipient(0);
    const consent = await createConsent(p, token, phone);
    const result = await smsc.sendMo({ from: phone, to: from, text: "STOP" });
    expect(result.statuses).toEqual([0]);
    expect(await inbound(phone)).toEqual([{ body: "STOP", keyword: "stop" }]);
    const revoked = await json<{ status: string }>(
      await p.request(`/v1/api/consents/${consent.id}`, { token }),
    );
    expect(revoked.status).toBe("revoked");
    const confirmations = await eventually(
      async () => submitsTo(phone),
      (submits) => submits.length > 0,
    );
    expect(confirmations.map((s) => s.text)).toEqual([expect.stringMatching(/unsubscribed/)]);
  });

  it.each(["udh", "sar"] as const)(
    "a concatenated MO message (%s, parts out of order) becomes one inbound message",
    async (parts) => {
      const phone = recipient(0);
      const text = `${"Long reply from a handset. ".repeat(12)}The end.`;
      const result = await smsc.sendMo({
        from: phone,
        to: from,
        text,
        parts,
        order: [2, 0, 1],
      });
      expect(result.statuses).toEqual([0, 0, 0]);
      expect(await inbound(phone)).toEqual([{ body: text, keyword: null }]);
      const { rows } = await p.pool.query(
        "SELECT count(*)::int AS n FROM messaging.inbound_parts WHERE from_number = $1",
        [phone],
      );
      expect(rows[0]).toEqual({ n: 0 });
    },
  );

  it("an MO message to a number that is no account's is refused with ESME_RINVDSTADR", async () => {
    const result = await smsc.sendMo({ from: recipient(0), to: "+19999999990", text: "hello?" });
    expect(result.statuses).toEqual([0x0b]);
  });
});
