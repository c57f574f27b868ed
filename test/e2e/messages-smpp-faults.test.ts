import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestSmsc, type SubmitFault, type TestSmsc } from "@switchboard/test-smsc";
import {
  startMessagingPlatform,
  type MessagingPlatform,
} from "@switchboard/test-support/fixtures/messages-platform";
import {
  createConsent,
  createTemplate,
  ended,
  json,
  ownNumber,
  send,
  startSender,
  waitForMessage,
  type MessageJson,
} from "@switchboard/test-support/fixtures/messages";
import { handset, smppEnv, smscCredentials } from "@switchboard/test-support/fixtures/smpp";

/** SMPP_RESPONSE_TIMEOUT_MS in smppEnv: a slow answer comes well after it. */
const responseTimeoutMs = 2_000;

/**
 * The SMSC misbehaves after it took a submit (the contract: "a part whose outcome is unknown
 * fails the message `outcome-unknown` and is not sent blind"). One submit at a time
 * (SMPP_WINDOW 1): the message in flight meets the fault, the one behind it never left.
 */
describe("the smpp carrier when the SMSC fails after taking a submit (PostgreSQL + Redis)", () => {
  let smsc: TestSmsc;
  let p: MessagingPlatform;
  let token: string;
  let from: string;
  let template: { id: string };
  /** Called with each submit the SMSC accepted, before the next one is read. */
  let onSubmit: ((text: string) => void) | undefined;

  beforeAll(async () => {
    smsc = await startTestSmsc({
      ...smscCredentials,
      receiptDelayMs: 10,
      slowResponseMs: responseTimeoutMs * 2,
      onEvent: (event) => {
        if (event.type === "submit") onSubmit?.(event.submit.text);
      },
    });
    p = await startMessagingPlatform({ env: smppEnv(smsc, { SMPP_WINDOW: "1" }) });
    ({ token, from, template } = await startSender(p, "{{text}}", {
      capabilities: ["sms"],
      channels: ["sms"],
    }));
  });
  afterAll(async () => {
    await p?.stop();
    await smsc?.stop();
  });

  async function sendText(text: string): Promise<MessageJson> {
    // The handset's last digit 0: delivered.
    const to = handset(0);
    const consent = await createConsent(p, token, to);
    const response = await send(p, token, {
      channel: "sms",
      to,
      from,
      template_id: template.id,
      variables: { text },
      consent_id: consent.id,
    });
    expect(response.status).toBe(202);
    return json<MessageJson>(response);
  }

  /** Two messages while `fault` is armed for one submit; both once they ended. */
  async function twoMessagesMeeting(fault: SubmitFault) {
    await smsc.waitFor((s) => s.bound() > 0, 10_000);
    smsc.faultSubmits(fault);
    const sent = await Promise.all([sendText(`${fault} a`), sendText(`${fault} b`)]);
    const messages = await Promise.all(
      sent.map((message) => waitForMessage(p, token, message.id, ended, 30_000)),
    );
    const faultAt = smsc.pdus.find((pdu) => pdu.fault === fault)?.at;
    return { messages, faultAt };
  }

  /** The SMSC took each text at most once; the faulted one failed, the other was delivered. */
  function expectOnceEach(fault: SubmitFault, messages: MessageJson[]) {
    const texts = smsc.submits.map((s) => s.text).filter((text) => text.startsWith(`${fault} `));
    expect(texts.sort()).toEqual([`${fault} a`, `${fault} b`]);
    const outcomes = messages.map((m) => [m.status, m.error_code]).sort();
    expect(outcomes).toEqual([
      ["delivered", null],
      ["failed", "outcome-unknown"],
    ]);
  }

  const bindsAfter = (at: number) => smsc.binds.filter((b) => b.status === 0 && b.at > at);

  it("accept-then-drop: the taken submit is not sent again; the message fails outcome-unknown", async () => {
    const { messages, faultAt } = await twoMessagesMeeting("accept-then-drop");
    expectOnceEach("accept-then-drop", messages);
    expect(bindsAfter(faultAt!).length).toBeGreaterThan(0);
  });

  it("a response later than SMPP_RESPONSE_TIMEOUT_MS: not sent again; the message fails outcome-unknown", async () => {
    const { messages, faultAt } = await twoMessagesMeeting("slow-response");
    expectOnceEach("slow-response", messages);
    // The bind was dropped at the timeout and bound again before the late answer was due.
    const rebound = bindsAfter(faultAt!)[0]!;
    expect(rebound.at - faultAt!).toBeGreaterThanOrEqual(responseTimeoutMs - 100);
  });

  it.each(["bad-length", "zero-length", "garbage"] as const)(
    "a %s PDU instead of the answer: rebound within 1 s, nothing sent twice, outcome-unknown",
    async (fault) => {
      const { messages, faultAt } = await twoMessagesMeeting(fault);
      const rebound = bindsAfter(faultAt!)[0];
      expect(rebound).toBeDefined();
      expect(rebound!.at - faultAt!).toBeLessThan(1_000);
      expectOnceEach(fault, messages);
    },
  );

  it("the second part of a message taken, then the connection dropped: no part twice, outcome-unknown", async () => {
    await smsc.waitFor((s) => s.bound() > 0, 10_000);
    const text = `two parts ${"x".repeat(170)}`;
    onSubmit = (submitted) => {
      if (!submitted.startsWith("two parts ")) return;
      onSubmit = undefined;
      smsc.faultSubmits("accept-then-drop");
    };
    const sent = await sendText(text);
    expect(sent.segments).toBe(2);
    const message = await waitForMessage(p, token, sent.id, ended, 30_000);
    expect([message.status, message.error_code]).toEqual(["failed", "outcome-unknown"]);
    const ref = smsc.submits.find((s) => s.text.startsWith("two parts "))?.udh?.ref;
    const parts = smsc.submits.filter((s) => s.udh !== undefined && s.udh.ref === ref);
    expect(parts.map((part) => part.udh?.seq)).toEqual([1, 2]);
    expect(parts.map((part) => part.text).join("")).toBe(text);
  });
});

describe("the smpp carrier stopping with a submit in flight (PostgreSQL + Redis)", () => {
  let smsc: TestSmsc | undefined;
  let p: MessagingPlatform | undefined;

  afterAll(async () => {
    await p?.stop();
    await smsc?.stop();
  });

  it("waits for the answer before it unbinds: the message is sent once, not failed or given back", async () => {
    // Each answer takes 800 ms (SMPP_RESPONSE_TIMEOUT_MS is 2 s): the stop comes in between.
    const server = await startTestSmsc({ ...smscCredentials, submitDelayMs: 800 });
    smsc = server;
    const platform = await startMessagingPlatform({ env: smppEnv(server) });
    p = platform;
    const token = await platform.token();
    const from = await ownNumber(platform, token, ["sms"]);
    const template = await createTemplate(platform, token, "{{text}}", ["sms"]);
    const to = handset(0);
    const consent = await createConsent(platform, token, to);
    await server.waitFor((s) => s.bound() > 0, 10_000);
    const response = await send(platform, token, {
      channel: "sms",
      to,
      from,
      template_id: template.id,
      variables: { text: "in flight at the stop" },
      consent_id: consent.id,
    });
    const { id } = await json<MessageJson>(response);
    await server.waitFor(
      (s) => s.pdus.some((pdu) => pdu.direction === "in" && pdu.command === "submit_sm"),
      10_000,
    );
    await platform.test.stopService("messaging");
    const { rows } = await platform.pool.query<{ status: string; provider_message_id: string }>(
      "SELECT status, provider_message_id FROM messaging.messages WHERE id = $1",
      [id],
    );
    expect(rows[0]?.status).toBe("sent");
    expect(server.submits.map((s) => s.text)).toEqual(["in flight at the stop"]);
    expect(rows[0]?.provider_message_id).toBe(server.submits[0]?.messageId);
  });
});
