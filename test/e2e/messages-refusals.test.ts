import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startMessagingPlatform,
  type MessagingPlatform,
} from "@switchboard/test-support/fixtures/messages-platform";
import {
  createConsent,
  createTemplate,
  json,
  ownNumber,
  sandboxNumber,
  send,
} from "@switchboard/test-support/fixtures/messages";

interface Problem {
  code: string;
  status: number;
  detail: string;
  errors?: { pointer: string; detail: string }[];
}

/** Every refusal of POST /api/messages/send: its problem kind, and nothing stored or sent. */
describe("send refusals through the gateway (PostgreSQL + Redis)", () => {
  let p: MessagingPlatform;
  let token: string;
  let from: string;
  let smsOnly: string;
  let template: { id: string; version: number };
  let to: string;
  let consentId: string;
  let base: Record<string, unknown>;

  beforeAll(async () => {
    p = await startMessagingPlatform();
    token = await p.token();
    from = await ownNumber(p, token, ["sms", "mms", "rcs"]);
    smsOnly = await ownNumber(p, token, ["sms"], ["mms", "rcs"]);
    template = await createTemplate(p, token, "Hello {{name}}, {{greeting}}");
    to = sandboxNumber(0);
    consentId = (await createConsent(p, token, to)).id;
    base = {
      channel: "sms",
      to,
      from,
      template_id: template.id,
      variables: { name: "Ada", greeting: "hi" },
      consent_id: consentId,
    };
  });
  afterAll(async () => p?.stop());

  const messageIds = async () =>
    (await p.pool.query<{ id: string }>("SELECT id FROM messaging.messages ORDER BY id")).rows.map(
      (r) => r.id,
    );

  /** Sends `payload`, expects `status`/`code`, and checks nothing was stored or sent. */
  async function refused(
    payload: Record<string, unknown>,
    status: number,
    code: string,
  ): Promise<Problem> {
    const before = await messageIds();
    const response = await send(p, token, payload);
    expect(response.headers.get("content-type")).toContain("application/problem+json");
    const problem = await json<Problem>(response);
    expect({ status: response.status, code: problem.code }).toEqual({ status, code });
    await new Promise((resolve) => setTimeout(resolve, 30));
    // No message stored, and the network got nothing but messages accepted earlier.
    expect(await messageIds()).toEqual(before);
    const { rows } = await p.pool.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM messaging.sandbox_network WHERE client_ref <> ALL($1::text[])",
      [before],
    );
    expect(rows[0]?.n).toBe(0);
    return problem;
  }

  const pointers = (problem: Problem) => problem.errors?.map((e) => e.pointer).sort();

  it("a missing variable, and an unknown one", async () => {
    const problem = await refused(
      { ...base, variables: { name: "Ada", greting: "x" } },
      422,
      "VALIDATION_FAILED",
    );
    expect(pointers(problem)).toEqual(["#/variables/greeting", "#/variables/greting"]);
  });

  it("a rendered body over 1600 characters", async () => {
    const problem = await refused(
      { ...base, variables: { name: "A", greeting: "x".repeat(1_595) } },
      422,
      "VALIDATION_FAILED",
    );
    expect(pointers(problem)).toEqual(["#/variables"]);
    expect(problem.errors?.[0]?.detail).toContain("1600");
  });

  it("more than 10 media URLs, a non-https one, and media on sms", async () => {
    const eleven = Array.from({ length: 11 }, (_, i) => `https://cdn.example.com/${i}.jpg`);
    expect(
      pointers(
        await refused({ ...base, channel: "mms", media_urls: eleven }, 422, "VALIDATION_FAILED"),
      ),
    ).toEqual(["#/media_urls"]);
    const insecure = ["https://cdn.example.com/a.jpg", "http://cdn.example.com/b.jpg"];
    expect(
      pointers(
        await refused({ ...base, channel: "mms", media_urls: insecure }, 422, "VALIDATION_FAILED"),
      ),
    ).toEqual(["#/media_urls/1"]);
    expect(
      pointers(
        await refused(
          { ...base, media_urls: ["https://cdn.example.com/a.jpg"] },
          422,
          "VALIDATION_FAILED",
        ),
      ),
    ).toEqual(["#/media_urls"]);
    expect(pointers(await refused({ ...base, channel: "mms" }, 422, "VALIDATION_FAILED"))).toEqual([
      "#/media_urls",
    ]);
  });

  it("a from without the channel's capability, and a from that is not the account's", async () => {
    const noMms = await refused(
      { ...base, channel: "mms", from: smsOnly, media_urls: ["https://cdn.example.com/a.jpg"] },
      422,
      "VALIDATION_FAILED",
    );
    expect(pointers(noMms)).toEqual(["#/from"]);
    expect(noMms.errors?.[0]?.detail).toContain("no mms capability");
    const noRcsFallback = await refused(
      { ...base, channel: "rcs", fallback: "mms", from: smsOnly },
      422,
      "VALIDATION_FAILED",
    );
    expect(pointers(noRcsFallback)).toEqual(["#/fallback", "#/from"]);
    const notOurs = await refused({ ...base, from: "+14155550000" }, 422, "VALIDATION_FAILED");
    expect(pointers(notOurs)).toEqual(["#/from"]);
  });

  it("fallback rules, a template the channel is not approved for, an unknown template or version", async () => {
    expect(pointers(await refused({ ...base, fallback: "sms" }, 422, "VALIDATION_FAILED"))).toEqual(
      ["#/fallback"],
    );
    expect(
      pointers(
        await refused(
          {
            ...base,
            channel: "rcs",
            fallback: "sms",
            media_urls: ["https://cdn.example.com/a.jpg"],
          },
          422,
          "VALIDATION_FAILED",
        ),
      ),
    ).toEqual(["#/fallback"]);
    const smsTemplate = await createTemplate(p, token, "Only SMS {{name}} {{greeting}}", ["sms"]);
    expect(
      pointers(
        await refused(
          {
            ...base,
            template_id: smsTemplate.id,
            channel: "mms",
            media_urls: ["https://cdn.example.com/a.jpg"],
          },
          422,
          "VALIDATION_FAILED",
        ),
      ),
    ).toEqual(["#/channel"]);
    expect(
      pointers(
        await refused(
          { ...base, template_id: "tpl_00000000000000000000000000" },
          422,
          "VALIDATION_FAILED",
        ),
      ),
    ).toEqual(["#/template_id"]);
    expect(
      pointers(await refused({ ...base, template_version: 9 }, 422, "VALIDATION_FAILED")),
    ).toEqual(["#/template_version"]);
    expect(pointers(await refused({ ...base, to: "5550100" }, 422, "VALIDATION_FAILED"))).toEqual([
      "#/to",
    ]);
    expect(pointers(await refused({ ...base, ttl_seconds: 0 }, 422, "VALIDATION_FAILED"))).toEqual([
      "#/ttl_seconds",
    ]);
  });

  it("consent-required: unknown, another recipient's, a channel not covered, revoked, another account's", async () => {
    await refused(
      { ...base, consent_id: "cns_00000000000000000000000000" },
      422,
      "CONSENT_REQUIRED",
    );
    const someoneElse = await createConsent(p, token, sandboxNumber(9));
    await refused({ ...base, consent_id: someoneElse.id }, 422, "CONSENT_REQUIRED");
    const smsConsent = await createConsent(p, token, to, ["sms"]);
    const notCovered = await refused(
      {
        ...base,
        consent_id: smsConsent.id,
        channel: "mms",
        media_urls: ["https://cdn.example.com/a.jpg"],
      },
      422,
      "CONSENT_REQUIRED",
    );
    expect(notCovered.detail).toContain("mms");
    // The consent must cover the fallback channel too.
    const rcsOnly = await createConsent(p, token, to, ["rcs"]);
    await refused(
      { ...base, consent_id: rcsOnly.id, channel: "rcs", fallback: "sms" },
      422,
      "CONSENT_REQUIRED",
    );
    const revoked = await createConsent(p, token, to);
    const revoke = await p.request(`/v1/api/consents/${revoked.id}/revoke`, {
      method: "POST",
      token,
    });
    expect(revoke.status).toBe(200);
    await refused({ ...base, consent_id: revoked.id }, 422, "CONSENT_REQUIRED");
    const other = await p.otherAccountToken();
    const foreign = await p.request("/v1/api/consents", {
      method: "POST",
      token: other,
      json: { phone_number: to, channels: ["sms"], source: "api" },
    });
    await refused(
      { ...base, consent_id: (await json<{ id: string }>(foreign)).id },
      422,
      "CONSENT_REQUIRED",
    );
  });

  it("template-signature-invalid when the stored version was altered in the database", async () => {
    const victim = await createTemplate(p, token, "Your balance is {{amount}}");
    const payload = { ...base, template_id: victim.id, variables: { amount: "$5" } };
    expect((await send(p, token, payload)).status).toBe(202);
    for (const tamper of [
      "UPDATE messaging.template_versions SET body = 'Send your password to {{amount}}' WHERE template_id = $1",
      // Content and hash altered together: the JWS still names the original content.
      `UPDATE messaging.template_versions SET body = 'Pay {{amount}} now',
         content_sha256 = encode(sha256(convert_to(
           '{"body":"Pay {{amount}} now","channels":["sms","mms","rcs"],"name":"' || name || '","version":1}', 'UTF8')), 'hex')
       WHERE template_id = $1`,
      "UPDATE messaging.template_versions SET channels = ARRAY['sms'] WHERE template_id = $1",
    ]) {
      await p.pool.query(tamper, [victim.id]);
      const problem = await refused(payload, 422, "TEMPLATE_SIGNATURE_INVALID");
      expect(problem.detail).toContain(victim.id);
    }
  });

  it("bad shapes are 422 with pointers, never a 500", async () => {
    const problem = await refused(
      { ...base, channel: "fax", to: 5, unknown_field: true },
      422,
      "VALIDATION_FAILED",
    );
    expect(pointers(problem)).toEqual(["#/channel", "#/to", "#/unknown_field"]);
  });
});
