import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClient, createServiceToken } from "@switchboard/gateway/admin";
import { clientCredentialsToken } from "@switchboard/kit/testing";
import { startTestPlatform, type TestPlatform } from "@switchboard/test-support/platform";

/** docs/api.md "Administration (admin)": every operation, as the document must list it. */
const ADMIN_OPERATIONS = [
  "GET /v1/admin/accounts",
  "POST /v1/admin/accounts",
  "GET /v1/admin/accounts/{account_id}",
  "GET /v1/admin/accounts/{account_id}/clients",
  "POST /v1/admin/accounts/{account_id}/clients",
  "GET /v1/admin/accounts/{account_id}/service-tokens",
  "POST /v1/admin/accounts/{account_id}/service-tokens",
  "POST /v1/admin/clients/{client_id}/disable",
  "POST /v1/admin/clients/{client_id}/rotate-secret",
  "GET /v1/admin/keys",
  "POST /v1/admin/keys/rotate",
  "POST /v1/admin/service-tokens/{token_id}/revoke",
].sort();

interface Problem {
  code: string;
}

/**
 * The admin API as one route-table family among the others (real PostgreSQL and Redis, every
 * reply checked against the document): in the OpenAPI document with scope admin, its own rate
 * bucket, Idempotency-Key, a usage record of the acting client per change, 404 for what does
 * not exist, and only ever for the platform's own account — even a credential of another
 * account that holds `admin` (granted behind the API's back) administers nothing.
 */
describe("/v1/admin through the route table", () => {
  let p: TestPlatform;
  let admin: string;

  beforeAll(async () => {
    p = await startTestPlatform({ database: "postgres", redis: true, seed: 20 });
    admin = await p.token();
  });
  afterAll(async () => p?.stop());

  const call = (
    path: string,
    init: {
      method?: string;
      json?: unknown;
      token?: string;
      headers?: Record<string, string>;
    } = {},
  ) =>
    p.request(path, {
      method: init.method ?? (init.json === undefined ? "GET" : "POST"),
      token: init.token ?? admin,
      json: init.json,
      ...(init.headers ? { headers: init.headers } : {}),
    });
  const codeOf = async (response: Response) => ((await response.json()) as Problem).code;
  /** An access token of a client made in the database (client credentials over HTTP). */
  const tokenOf = (client: { clientId: string; clientSecret: string }) =>
    clientCredentialsToken((init) => p.fetch(`${p.url}/oauth/token`, init), {
      id: client.clientId,
      secret: client.clientSecret,
    });

  it("lists every operation of docs/api.md in the OpenAPI document, each needing admin", async () => {
    const document = (await (await p.request("/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, { "x-required-scope": string; tags: string[] }>>;
    };
    const operations = Object.entries(document.paths)
      .filter(([path]) => path.startsWith("/v1/admin/"))
      .flatMap(([path, methods]) =>
        Object.entries(methods).map(([method, op]) => ({
          name: `${method.toUpperCase()} ${path}`,
          op,
        })),
      );
    expect(operations.map((o) => o.name).sort()).toEqual(ADMIN_OPERATIONS);
    for (const { op } of operations) {
      expect(op["x-required-scope"]).toBe("admin");
      expect(op.tags).toEqual(["Administration"]);
    }
  });

  it("counts admin requests in the admin bucket and replays an Idempotency-Key", async () => {
    const first = await call("/v1/admin/accounts", {
      json: { name: "Idempotent Ltd" },
      headers: { "Idempotency-Key": "admin-create-1" },
    });
    expect(first.status).toBe(201);
    expect(first.headers.get("x-ratelimit-resource")).toBe("admin");
    const again = await call("/v1/admin/accounts", {
      json: { name: "Idempotent Ltd" },
      headers: { "Idempotency-Key": "admin-create-1" },
    });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const a = (await first.json()) as { id: string };
    expect(((await again.json()) as { id: string }).id).toBe(a.id);
    const listed = (await (await call("/v1/admin/accounts")).json()) as {
      data: { name: string }[];
    };
    expect(listed.data.filter((x) => x.name === "Idempotent Ltd")).toHaveLength(1);
  });

  it("replays a creation's shown-once secret only to the credential that created it", async () => {
    // A second admin of the platform's account, reusing the first one's Idempotency-Key.
    const second = await createClient(p.gateway.pool, {
      accountId: p.accountId,
      scopes: ["admin"],
    });
    const otherAdmin = await tokenOf(second);
    for (const [path, shownOnce] of [
      [`/v1/admin/accounts/${p.accountId}/clients`, "client_secret"],
      [`/v1/admin/accounts/${p.accountId}/service-tokens`, "token"],
    ] as const) {
      const key = `shown-once-${shownOnce}`;
      const json = { scopes: ["numbers:read"], name: "shown once" };
      const headers = { "Idempotency-Key": key };
      const first = await call(path, { json, headers });
      expect(first.status).toBe(201);
      const secret = ((await first.json()) as Record<string, string>)[shownOnce]!;
      expect(secret.length).toBeGreaterThan(20);
      const replayed = await call(path, { json, headers, token: otherAdmin });
      expect(replayed.status).toBe(409);
      expect(await codeOf(replayed)).toBe("IDEMPOTENCY_MISMATCH");
      expect(replayed.headers.get("idempotent-replayed")).toBeNull();
      // The creator's own retry still replays it.
      const retried = await call(path, { json, headers });
      expect(retried.headers.get("idempotent-replayed")).toBe("true");
      expect(((await retried.json()) as Record<string, string>)[shownOnce]).toBe(secret);
    }
  });

  it("records every change as a usage record of the acting client", async () => {
    const made = await call("/v1/admin/accounts", { json: { name: "Recorded" } });
    const { id } = (await made.json()) as { id: string };
    const requestId = made.headers.get("x-request-id");
    let events: { route: string; principal: string; status: number; request_id: string }[] = [];
    for (let i = 0; i < 50 && events.length === 0; i += 1) {
      const page = await call(`/v1/api/usage/events?kind=api.request&resource_id=${id}`);
      events = ((await page.json()) as { data: typeof events }).data;
      if (events.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      route: "/admin/accounts",
      principal: p.clientId,
      status: 201,
      request_id: requestId,
    });
  });

  it("answers 404 for what does not exist", async () => {
    const missing = [
      call("/v1/admin/accounts/acct_nobody"),
      call("/v1/admin/accounts/acct_nobody/clients"),
      call("/v1/admin/accounts/acct_nobody/clients", { json: {} }),
      call("/v1/admin/accounts/acct_nobody/service-tokens"),
      call("/v1/admin/accounts/acct_nobody/service-tokens", { json: { scopes: ["numbers:read"] } }),
      call("/v1/admin/clients/cli_nobody/disable", { method: "POST" }),
      call("/v1/admin/clients/cli_nobody/rotate-secret", { method: "POST" }),
      call("/v1/admin/service-tokens/tok_00000000000000000000000000/revoke", { method: "POST" }),
    ];
    for (const response of await Promise.all(missing)) {
      expect(response.status).toBe(404);
      expect(await codeOf(response)).toBe("NOT_FOUND");
    }
  });

  it("grants admin only within the platform's account (422 elsewhere)", async () => {
    const other = (await (
      await call("/v1/admin/accounts", { json: { name: "Other" } })
    ).json()) as {
      id: string;
    };
    for (const path of [
      `/v1/admin/accounts/${other.id}/clients`,
      `/v1/admin/accounts/${other.id}/service-tokens`,
    ]) {
      const refused = await call(path, { json: { scopes: ["numbers:read", "admin"] } });
      expect(refused.status).toBe(422);
      // The rule the CLI applies too (gateway/test/admin-cli.integration.test.ts): checkAdminGrant.
      expect(await refused.json()).toMatchObject({
        code: "VALIDATION_FAILED",
        errors: [
          { pointer: "#/scopes", detail: "admin is granted only within the platform's account" },
        ],
      });
    }
    // Within the platform's account a service token may hold admin, and administers.
    const platformToken = await call(`/v1/admin/accounts/${p.accountId}/service-tokens`, {
      json: { scopes: ["admin"], name: "ops" },
    });
    expect(platformToken.status).toBe(201);
    const { token } = (await platformToken.json()) as { token: string };
    expect((await call("/v1/admin/accounts", { token })).status).toBe(200);
  });

  it("refuses every admin operation to another account's credentials, even ones holding admin", async () => {
    const other = (await (
      await call("/v1/admin/accounts", { json: { name: "Rogue" } })
    ).json()) as {
      id: string;
    };
    // Granted behind the API's back (directly in the database): the scope alone is not enough.
    const client = await createClient(p.gateway.pool, { accountId: other.id, scopes: ["admin"] });
    const serviceToken = await createServiceToken(p.gateway.pool, {
      accountId: other.id,
      scopes: ["admin"],
    });
    const access_token = await tokenOf(client);
    for (const token of [access_token, serviceToken.token]) {
      const attempts = [
        call("/v1/admin/accounts", { token }),
        call("/v1/admin/accounts", { token, json: { name: "Mine now" } }),
        call(`/v1/admin/accounts/${other.id}`, { token }),
        call(`/v1/admin/accounts/${p.accountId}/clients`, { token }),
        call(`/v1/admin/accounts/${other.id}/clients`, { token, json: {} }),
        call(`/v1/admin/clients/${p.clientId}/disable`, { token, method: "POST" }),
        call(`/v1/admin/clients/${client.clientId}/rotate-secret`, { token, method: "POST" }),
        call("/v1/admin/keys", { token }),
        call("/v1/admin/keys/rotate", { token, json: { purpose: "access-token" } }),
      ];
      for (const response of await Promise.all(attempts)) {
        expect(response.status).toBe(403);
        expect(await codeOf(response)).toBe("INSUFFICIENT_SCOPE");
      }
    }
    // Nothing happened: the platform client still works, no account was made.
    expect((await call("/v1/api/agents")).status).toBe(200);
    const names = (
      (await (await call("/v1/admin/accounts")).json()) as { data: { name: string }[] }
    ).data;
    expect(names.map((a) => a.name)).not.toContain("Mine now");
  });

  it("keeps a second account's numbers apart from the first's", async () => {
    const acme = (await (
      await call("/v1/admin/accounts", { json: { name: "Numbers Co" } })
    ).json()) as {
      id: string;
    };
    const made = (await (
      await call(`/v1/admin/accounts/${acme.id}/clients`, {
        json: { scopes: ["numbers:read", "numbers:write"] },
      })
    ).json()) as { client_id: string; client_secret: string };
    const issued = await p.fetch(`${p.url}/oauth/token`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: made.client_id,
        client_secret: made.client_secret,
      }),
    });
    const acmeToken = ((await issued.json()) as { access_token: string }).access_token;

    // The platform's account buys a number.
    const search = await call("/v1/api/numbers/search?limit=1");
    const number = ((await search.json()) as { data: { number: string }[] }).data[0]!.number;
    const hold = (await (await call("/v1/api/numbers/hold", { json: { number } })).json()) as {
      id: string;
    };
    const assigned = await call(`/v1/api/numbers/holds/${hold.id}/assign`, { method: "POST" });
    expect(assigned.status).toBe(200);
    const numberId = ((await assigned.json()) as { phone_number: { id: string } }).phone_number.id;

    const mine = (await (await call("/v1/api/numbers")).json()) as { data: { id: string }[] };
    expect(mine.data.map((n) => n.id)).toContain(numberId);
    const theirs = (await (await call("/v1/api/numbers", { token: acmeToken })).json()) as {
      data: unknown[];
    };
    expect(theirs.data).toEqual([]);
    const peek = await call(`/v1/api/numbers/${numberId}`, { token: acmeToken });
    expect(peek.status).toBe(404);
    const grab = await call(`/v1/api/numbers/${numberId}/release`, {
      token: acmeToken,
      method: "POST",
    });
    expect(grab.status).toBe(404);
    // And the new account's token cannot administer.
    expect((await call("/v1/admin/accounts", { token: acmeToken })).status).toBe(403);
  });
});
