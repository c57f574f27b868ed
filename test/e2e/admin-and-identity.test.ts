import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, disableClient } from "@switchboard/gateway/admin";
import { startTestPlatform, type TestPlatform } from "@switchboard/test-support/platform";

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;

/**
 * Identity hardening and the admin API over HTTP, on real PostgreSQL: a disabled client's
 * tokens stop at once, guessing a secret locks the client id without hashing, hashing is
 * capped, and /v1/admin makes a second account whose client is isolated from the first.
 */
describe("identity hardening and /v1/admin", () => {
  let p: TestPlatform;
  let admin: string;

  beforeAll(async () => {
    p = await startTestPlatform({ database: "postgres", seed: 50, contract: "off" });
    admin = await p.token();
  });
  afterAll(async () => p?.stop());

  const tokenFor = (id: string, secret: string) =>
    fetch(`${p.url}/oauth/token`, {
      method: "POST",
      headers: {
        Authorization: basic(id, secret),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "grant_type=client_credentials",
    });
  const accessToken = async (id: string, secret: string) => {
    const response = await tokenFor(id, secret);
    expect(response.status).toBe(200);
    return ((await response.json()) as { access_token: string }).access_token;
  };

  it("refuses a disabled client's access tokens from the next request on, memory warm", async () => {
    const made = await createClient(p.gateway.pool, { accountId: p.accountId, name: "soon off" });
    const token = await accessToken(made.clientId, made.clientSecret);
    // Twice: the second is answered from the verified-token memory.
    for (let i = 0; i < 2; i += 1) {
      expect((await p.request("/v1/api/agents", { token })).status).toBe(200);
    }
    await disableClient(p.gateway.pool, made.clientId);
    const refused = await p.request("/v1/api/agents", { token });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { code: string }).code).toBe("INVALID_TOKEN");
  });

  it("locks a client id after five wrong secrets, answering without hashing, until the backoff ends", async () => {
    const made = await createClient(p.gateway.pool, { accountId: p.accountId, name: "guessed" });
    for (let i = 0; i < 5; i += 1) {
      expect((await tokenFor(made.clientId, `sbcs_wrong_${i}_padding_padding`)).status).toBe(401);
    }
    const hashes = p.gateway.identity.hashing;
    const peakBefore = hashes.peak;
    const spy = { calls: 0 };
    const original = hashes.run.bind(hashes);
    hashes.run = (source, work) => {
      spy.calls += 1;
      return original(source, work);
    };
    try {
      // Locked: even the right secret is refused, and no hash runs.
      const locked = await tokenFor(made.clientId, made.clientSecret);
      expect(locked.status).toBe(401);
      expect(((await locked.json()) as { error: string }).error).toBe("invalid_client");
      expect(Number(locked.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(spy.calls).toBe(0);
    } finally {
      hashes.run = original;
    }
    expect(hashes.peak).toBe(peakBefore);
    // The first lock is one second: then the right secret works and clears the count.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await tokenFor(made.clientId, made.clientSecret)).status).toBe(200);
    expect((await tokenFor(made.clientId, "sbcs_wrong_again_padding_padding")).status).toBe(401);
    expect((await tokenFor(made.clientId, made.clientSecret)).status).toBe(200);
  });

  it("counts unknown client ids like known ones (the lockout reveals nothing)", async () => {
    for (let i = 0; i < 5; i += 1) {
      expect((await tokenFor("cli_nobody", `guess-${i}-padding-padding`)).status).toBe(401);
    }
    const locked = await tokenFor("cli_nobody", "guess-6-padding-padding");
    expect(locked.status).toBe(401);
    expect(locked.headers.get("retry-after")).not.toBeNull();
  });

  it("hashes at most two secrets at once under a burst of 18 wrong guesses", async () => {
    const hashes = p.gateway.identity.hashing;
    hashes.peak = 0;
    // One address's share of the queue: two hashing, 16 waiting (more get 503).
    const replies = await Promise.all(
      Array.from({ length: 18 }, (_, i) => tokenFor(`cli_burst_${i}`, "wrong-secret-padding")),
    );
    expect(replies.map((r) => r.status)).toEqual(Array(18).fill(401));
    expect(hashes.peak).toBe(2);
  });

  describe("the admin API", () => {
    const call = (path: string, init: { method?: string; json?: unknown; token?: string } = {}) =>
      p.request(path, {
        method: init.method ?? "GET",
        token: init.token ?? admin,
        json: init.json,
      });

    it("makes a second account over HTTP whose client is isolated from the first", async () => {
      const made = await call("/v1/admin/accounts", { method: "POST", json: { name: "Acme" } });
      expect(made.status).toBe(201);
      const acme = (await made.json()) as { id: string; name: string };
      expect(acme).toMatchObject({ name: "Acme" });
      expect(made.headers.get("location")).toBe(`/v1/admin/accounts/${acme.id}`);
      expect((await call(`/v1/admin/accounts/${acme.id}`)).status).toBe(200);
      const listed = (await (await call("/v1/admin/accounts")).json()) as {
        data: { id: string }[];
      };
      expect(listed.data.map((a) => a.id)).toContain(acme.id);

      // admin is only for the platform's account.
      const refused = await call(`/v1/admin/accounts/${acme.id}/clients`, {
        method: "POST",
        json: { scopes: ["admin"] },
      });
      expect(refused.status).toBe(422);

      const client = await call(`/v1/admin/accounts/${acme.id}/clients`, {
        method: "POST",
        json: { name: "acme app" },
      });
      expect(client.status).toBe(201);
      const { client_id, client_secret, scopes } = (await client.json()) as {
        client_id: string;
        client_secret: string;
        scopes: string[];
      };
      expect(scopes).not.toContain("admin");
      const acmeToken = await accessToken(client_id, client_secret);

      // Acme creates an agent; neither account sees the other's.
      await call("/v1/api/agents", { method: "POST", json: { name: "platform-agent" } });
      const acmeAgent = await call("/v1/api/agents", {
        method: "POST",
        token: acmeToken,
        json: { name: "acme-agent" },
      });
      expect(acmeAgent.status).toBe(201);
      const acmeAgentId = ((await acmeAgent.json()) as { id: string }).id;
      const names = async (token: string) =>
        (
          (await (await call("/v1/api/agents", { token })).json()) as { data: { name: string }[] }
        ).data.map((a) => a.name);
      expect(await names(acmeToken)).toEqual(["acme-agent"]);
      expect(await names(admin)).not.toContain("acme-agent");
      expect((await call(`/v1/api/agents/${acmeAgentId}`)).status).toBe(404);

      // Acme cannot administer.
      expect((await call("/v1/admin/accounts", { token: acmeToken })).status).toBe(403);

      // Rotate: the old secret stops at once, the new one works.
      const rotated = await call(`/v1/admin/clients/${client_id}/rotate-secret`, {
        method: "POST",
      });
      expect(rotated.status).toBe(200);
      const fresh = ((await rotated.json()) as { client_secret: string }).client_secret;
      expect((await tokenFor(client_id, client_secret)).status).toBe(401);
      const freshToken = await accessToken(client_id, fresh);

      // Disable: its tokens stop from the next request on.
      expect(
        (await call(`/v1/admin/clients/${client_id}/disable`, { method: "POST" })).status,
      ).toBe(200);
      expect((await call("/v1/api/agents", { token: freshToken })).status).toBe(401);
      const clients = (await (await call(`/v1/admin/accounts/${acme.id}/clients`)).json()) as {
        data: { client_id: string; disabled_at: string | null }[];
      };
      expect(clients.data.find((c) => c.client_id === client_id)?.disabled_at).not.toBeNull();
    });

    it("creates and revokes service tokens, and rotates keys keeping the old one in the JWKS", async () => {
      const made = await call(`/v1/admin/accounts/${p.accountId}/service-tokens`, {
        method: "POST",
        json: { scopes: ["numbers:read"], name: "ci" },
      });
      expect(made.status).toBe(201);
      const { id, token } = (await made.json()) as { id: string; token: string };
      expect(token).toMatch(/^sbt_/);
      expect((await call("/v1/api/numbers", { token })).status).toBe(200);
      const listed = (await (
        await call(`/v1/admin/accounts/${p.accountId}/service-tokens`)
      ).json()) as {
        data: { id: string; token?: string }[];
      };
      expect(listed.data.find((t) => t.id === id)).toBeDefined();
      expect(listed.data.every((t) => t.token === undefined)).toBe(true);
      expect((await call(`/v1/admin/service-tokens/${id}/revoke`, { method: "POST" })).status).toBe(
        200,
      );
      expect((await call("/v1/api/numbers", { token })).status).toBe(401);

      const before = (await (await call("/v1/admin/keys?purpose=access-token")).json()) as {
        data: { kid: string; status: string }[];
      };
      const old = before.data.find((k) => k.status === "active")!.kid;
      const rotated = await call("/v1/admin/keys/rotate", {
        method: "POST",
        json: { purpose: "access-token" },
      });
      expect(rotated.status).toBe(201);
      const fresh = ((await rotated.json()) as { kid: string }).kid;
      expect(fresh).not.toBe(old);
      const jwks = (await (await fetch(`${p.url}/.well-known/jwks.json`)).json()) as {
        keys: { kid: string }[];
      };
      expect(jwks.keys.map((k) => k.kid)).toEqual(expect.arrayContaining([old, fresh]));
      // A token signed with the old key still verifies.
      expect((await call("/v1/api/agents")).status).toBe(200);
    });

    it("needs the admin scope", async () => {
      const reader = await p.token("numbers:read");
      const refused = await call("/v1/admin/accounts", { token: reader });
      expect(refused.status).toBe(403);
      expect((await call("/v1/admin/accounts", { token: "" })).status).toBe(401);
    });
  });
});
