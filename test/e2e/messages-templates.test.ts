import { compactVerify, createLocalJWKSet, decodeProtectedHeader } from "jose";
import canonicalize from "canonicalize";
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startMessagingPlatform,
  type MessagingPlatform,
} from "@switchboard/test-support/fixtures/messages-platform";
import {
  createConsent,
  json,
  ownNumber,
  sandboxNumber,
  send,
  type MessageJson,
} from "@switchboard/test-support/fixtures/messages";
import type { components } from "@switchboard/sdk";

type TemplateJson = components["schemas"]["Template"];

/** Templates: versions, signatures verified against the served JWKS, rotation. */
describe("templates through the gateway (PostgreSQL + Redis)", () => {
  let p: MessagingPlatform;
  let token: string;

  beforeAll(async () => {
    p = await startMessagingPlatform();
    token = await p.token();
  });
  afterAll(async () => p?.stop());

  const create = async (payload: Record<string, unknown>) =>
    p.request("/v1/api/templates", { method: "POST", token, json: payload });

  async function verifyAgainstJwks(t: TemplateJson) {
    const jwks = await json<{ keys: { kid: string; alg: string }[] }>(
      await p.request("/.well-known/jwks.json"),
    );
    expect(jwks.keys.map((k) => k.kid)).toContain(t.kid);
    const { payload, protectedHeader } = await compactVerify(
      t.signature,
      createLocalJWKSet(jwks as never),
      {
        algorithms: ["EdDSA"],
      },
    );
    expect(protectedHeader).toMatchObject({ alg: "EdDSA", kid: t.kid });
    const canonical = canonicalize({
      name: t.name,
      version: t.version,
      channels: t.channels,
      body: t.body,
    });
    expect(new TextDecoder().decode(payload)).toBe(canonical);
    expect(
      createHash("sha256")
        .update(canonical ?? "")
        .digest("hex"),
    ).toBe(t.content_sha256);
  }

  it("creates an approved, signed version 1 that verifies with the published JWKS", async () => {
    const response = await create({
      name: "otp",
      channels: ["rcs", "sms"],
      body: "Code {{code}} for {{ name }}. {{code}}",
    });
    expect(response.status).toBe(201);
    const t = await json<TemplateJson>(response);
    expect(response.headers.get("location")).toBe(`/v1/api/templates/${t.id}`);
    expect(t).toMatchObject({
      name: "otp",
      version: 1,
      latest_version: 1,
      channels: ["sms", "rcs"],
      variables: ["code", "name"],
      status: "approved",
    });
    expect(decodeProtectedHeader(t.signature).kid).toBe(t.kid);
    await verifyAgainstJwks(t);
    const duplicate = await create({ name: "otp", channels: ["sms"], body: "x" });
    expect(duplicate.status).toBe(409);
    expect((await json(duplicate)).code).toBe("CONFLICT");
  });

  it("adds immutable versions; sends use the latest or the one named", async () => {
    const t1 = await json<TemplateJson>(
      await create({ name: "welcome", channels: ["sms"], body: "Welcome {{name}}" }),
    );
    const v2r = await p.request(`/v1/api/templates/${t1.id}/versions`, {
      method: "POST",
      token,
      json: { body: "Hello again {{name}}!" },
    });
    expect(v2r.status).toBe(201);
    const v2 = await json<TemplateJson>(v2r);
    expect(v2).toMatchObject({
      id: t1.id,
      version: 2,
      latest_version: 2,
      channels: ["sms"],
      name: "welcome",
    });
    expect(v2r.headers.get("location")).toBe(`/v1/api/templates/${t1.id}?version=2`);
    await verifyAgainstJwks(v2);
    const latest = await json<TemplateJson>(
      await p.request(`/v1/api/templates/${t1.id}`, { token }),
    );
    expect(latest.version).toBe(2);
    const first = await json<TemplateJson>(
      await p.request(`/v1/api/templates/${t1.id}?version=1`, { token }),
    );
    expect(first).toMatchObject({
      version: 1,
      latest_version: 2,
      body: "Welcome {{name}}",
      signature: t1.signature,
    });
    expect((await p.request(`/v1/api/templates/${t1.id}?version=3`, { token })).status).toBe(404);

    const from = await ownNumber(p, token, ["sms"]);
    const to = sandboxNumber(0);
    const consent = await createConsent(p, token, to);
    const payload = {
      channel: "sms",
      to,
      from,
      template_id: t1.id,
      variables: { name: "Ada" },
      consent_id: consent.id,
    };
    const latestSend = await json<MessageJson>(await send(p, token, payload));
    expect(latestSend).toMatchObject({ template_version: 2, body: "Hello again Ada!" });
    const pinned = await json<MessageJson>(
      await send(p, token, { ...payload, template_version: 1 }),
    );
    expect(pinned).toMatchObject({ template_version: 1, body: "Welcome Ada" });
  });

  it("lists templates newest first with pagination; another account sees 404", async () => {
    for (const name of ["list-a", "list-b", "list-c"]) {
      expect((await create({ name, channels: ["sms"], body: `Body of ${name}` })).status).toBe(201);
    }
    const page1 = await json<{ data: TemplateJson[]; next_cursor: string; has_more: boolean }>(
      await p.request("/v1/api/templates?limit=2", { token }),
    );
    expect(page1.data.map((t) => t.name)).toEqual(["list-c", "list-b"]);
    expect(page1.has_more).toBe(true);
    const page2 = await json<{ data: TemplateJson[] }>(
      await p.request(`/v1/api/templates?limit=2&cursor=${encodeURIComponent(page1.next_cursor)}`, {
        token,
      }),
    );
    expect(page2.data[0]?.name).toBe("list-a");
    const other = await p.otherAccountToken();
    expect(
      (await p.request(`/v1/api/templates/${page1.data[0]!.id}`, { token: other })).status,
    ).toBe(404);
    const otherVersion = await p.request(`/v1/api/templates/${page1.data[0]!.id}/versions`, {
      method: "POST",
      token: other,
      json: { body: "hijack" },
    });
    expect(otherVersion.status).toBe(404);
  });

  it("refuses malformed bodies and channels with pointers", async () => {
    const bad = await create({ name: "bad", channels: ["sms", "fax"], body: "Hi {{first name}}" });
    expect(bad.status).toBe(422);
    const pointers = (await json<{ errors: { pointer: string }[] }>(bad)).errors.map(
      (e) => e.pointer,
    );
    expect(pointers).toEqual(["#/channels/1"]);
    const unclosed = await create({ name: "bad", channels: ["sms"], body: "Hi {{name" });
    expect(
      (await json<{ errors: { pointer: string }[] }>(unclosed)).errors.map((e) => e.pointer),
    ).toEqual(["#/body"]);
    const repeated = await create({ name: "bad", channels: ["sms", "sms"], body: "Hi {{1x}}" });
    expect(
      (await json<{ errors: { pointer: string }[] }>(repeated)).errors.map((e) => e.pointer).sort(),
    ).toEqual(["#/body", "#/channels/1"]);
  });

  it("after a key rotation old versions still verify and new ones are signed with the new key", async () => {
    const before = await json<TemplateJson>(
      await create({ name: "rotating", channels: ["sms"], body: "v1 {{x}}" }),
    );
    await p.messaging.keys.rotate("template");
    const after = await json<TemplateJson>(
      await p.request(`/v1/api/templates/${before.id}/versions`, {
        method: "POST",
        token,
        json: { body: "v2 {{x}}" },
      }),
    );
    expect(after.kid).not.toBe(before.kid);
    await verifyAgainstJwks(before);
    await verifyAgainstJwks(after);
    const from = await ownNumber(p, token, ["sms"], [], 1);
    const to = sandboxNumber(0);
    const consent = await createConsent(p, token, to);
    const old = await send(p, token, {
      channel: "sms",
      to,
      from,
      template_id: before.id,
      template_version: 1,
      variables: { x: "1" },
      consent_id: consent.id,
    });
    expect(old.status).toBe(202);
  });
});
