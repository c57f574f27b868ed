import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningGateway } from "@switchboard/gateway";
import { startTestPlatform, type TestPlatform } from "@switchboard/test-support/platform";

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`;

interface Problem {
  code: string;
  status: number;
}

/**
 * Identity hardening as two gateway replicas see it (real PostgreSQL and Redis, every reply
 * checked against the OpenAPI document): what one replica is told — a client disabled, a
 * service token revoked, wrong secrets guessed — holds on the other from the next request on,
 * whatever the other remembers; and the cap on secret hashing answers its overflow as a
 * documented 503.
 */
describe("identity across gateway replicas", () => {
  let p: TestPlatform;
  let replica: RunningGateway;
  let admin: string;

  beforeAll(async () => {
    p = await startTestPlatform({ database: "postgres", redis: true, contract: "enforce" });
    replica = await p.startReplica();
    admin = await p.token();
  });
  afterAll(async () => p?.stop());

  const on = (base: string, path: string, init: RequestInit = {}) =>
    p.fetch(`${base}${path}`, init);
  const get = (base: string, path: string, token: string) =>
    on(base, path, { headers: { Authorization: `Bearer ${token}` } });
  const adminPost = (path: string, json: unknown = {}) =>
    p.request(path, { method: "POST", token: admin, json });
  const tokenFor = (base: string, id: string, secret: string) =>
    on(base, "/oauth/token", {
      method: "POST",
      headers: {
        Authorization: basic(id, secret),
        "Content-Type": "application/x-www-form-urlencoded",
      },
      body: "grant_type=client_credentials",
    });
  const newClient = async (name: string) => {
    const made = await adminPost(`/v1/admin/accounts/${p.accountId}/clients`, {
      name,
      scopes: ["numbers:read"],
    });
    expect(made.status).toBe(201);
    return (await made.json()) as { client_id: string; client_secret: string };
  };
  const expectInvalidToken = async (response: Response) => {
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect(((await response.json()) as Problem).code).toBe("INVALID_TOKEN");
  };

  /** Polls `read` for up to 1 s until it answers 401 (a change reaches every replica in that). */
  const refusedWithinASecond = async (read: () => Promise<Response>) => {
    const deadline = Date.now() + 1_000;
    let response = await read();
    while (response.status !== 401 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      response = await read();
    }
    return response;
  };

  it("refuses a client disabled on one replica on the other within a second, both remembering its status", async () => {
    const client = await newClient("disabled across replicas");
    const issued = await tokenFor(p.url, client.client_id, client.client_secret);
    const { access_token: token } = (await issued.json()) as { access_token: string };
    // Both replicas verify the token and remember it and its client's status (the second
    // request of each is a hit).
    for (const base of [p.url, replica.url, p.url, replica.url]) {
      expect((await get(base, "/v1/api/numbers", token)).status).toBe(200);
    }
    const disabled = await adminPost(`/v1/admin/clients/${client.client_id}/disable`);
    expect(disabled.status).toBe(200);
    expect(((await disabled.json()) as { disabled_at: string | null }).disabled_at).not.toBeNull();
    await expectInvalidToken(
      await refusedWithinASecond(() => get(replica.url, "/v1/api/numbers", token)),
    );
    await expectInvalidToken(
      await refusedWithinASecond(() => get(p.url, "/v1/api/numbers", token)),
    );
    // And it gets no new token (indistinguishable from a wrong secret).
    const refused = await tokenFor(replica.url, client.client_id, client.client_secret);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: string }).error).toBe("invalid_client");
  });

  it("refuses a disabled client on every replica even when no replica was told (LISTEN connections cut)", async () => {
    const client = await newClient("listener lost");
    const issued = await tokenFor(p.url, client.client_id, client.client_secret);
    const { access_token: token } = (await issued.json()) as { access_token: string };
    for (const base of [replica.url, replica.url]) {
      expect((await get(base, "/v1/api/numbers", token)).status).toBe(200);
    }
    // Cut every LISTEN connection; a change made now notifies nobody.
    await p.gateway.pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE query LIKE 'LISTEN "gateway_client_status"%' AND pid <> pg_backend_pid()`,
    );
    await p.gateway.pool.query(
      "UPDATE gateway.clients SET disabled_at = now() WHERE client_id = $1",
      [client.client_id],
    );
    await expectInvalidToken(await get(replica.url, "/v1/api/numbers", token));
    await expectInvalidToken(await get(p.url, "/v1/api/numbers", token));
  });

  it("refuses a service token revoked on one replica on the other at once", async () => {
    const made = await adminPost(`/v1/admin/accounts/${p.accountId}/service-tokens`, {
      scopes: ["numbers:read"],
    });
    const { id, token } = (await made.json()) as { id: string; token: string };
    expect((await get(replica.url, "/v1/api/numbers", token)).status).toBe(200);
    expect((await adminPost(`/v1/admin/service-tokens/${id}/revoke`)).status).toBe(200);
    await expectInvalidToken(await get(replica.url, "/v1/api/numbers", token));
  });

  it("locks a client id on every replica after five wrong secrets on one", async () => {
    const client = await newClient("guessed across replicas");
    for (let i = 0; i < 5; i += 1) {
      const wrong = await tokenFor(p.url, client.client_id, `sbcs_wrong_${i}_padding_padding`);
      expect(wrong.status).toBe(401);
    }
    const locked = await tokenFor(replica.url, client.client_id, client.client_secret);
    expect(locked.status).toBe(401);
    expect(locked.headers.get("retry-after")).toBe("1");
    expect(((await locked.json()) as { error: string }).error).toBe("invalid_client");
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await tokenFor(replica.url, client.client_id, client.client_secret)).status).toBe(200);
  });

  it("answers past the hashing queue with a documented 503 and Retry-After, never more than two at once", async () => {
    const hashing = replica.identity.hashing;
    hashing.peak = 0;
    // 150 guesses at distinct ids at once from one address: two hash, 16 wait, the rest are
    // turned away.
    const replies = await Promise.all(
      Array.from({ length: 150 }, async (_, i) => {
        const response = await tokenFor(replica.url, `cli_flood_${i}`, "wrong-secret-padding");
        return {
          status: response.status,
          type: response.headers.get("content-type") ?? "",
          retryAfter: response.headers.get("retry-after"),
          body: (await response.json()) as { error?: string; code?: string },
        };
      }),
    );
    expect(hashing.peak).toBe(2);
    const unavailable = replies.filter((r) => r.status === 503);
    expect(unavailable.length).toBeGreaterThan(0);
    for (const reply of unavailable) {
      expect(reply.type).toContain("application/problem+json");
      expect(reply.body.code).toBe("SERVICE_UNAVAILABLE");
      expect(Number(reply.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    for (const reply of replies.filter((r) => r.status !== 503)) {
      expect(reply).toMatchObject({ status: 401, body: { error: "invalid_client" } });
    }
    // The contract checker saw every reply and found each documented.
    expect(p.contract?.failures()).toEqual([]);
  });
});
