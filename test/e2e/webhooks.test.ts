import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  startWebhookPlatform,
  type WebhookPlatform,
} from "@switchboard/test-support/fixtures/webhooks-platform";

type Subscription = {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  status: string;
  disabled_reason: string | null;
  previous_secret_expires_at: string | null;
  secret?: string;
};
type Problem = {
  type: string;
  status: number;
  code: string;
  detail: string;
  errors?: { pointer: string; detail: string }[];
};

/** Webhook subscriptions through the gateway: contract, validation, isolation, the SSRF guard. */
describe("webhook subscriptions through the gateway (PostgreSQL + Redis)", () => {
  let p: WebhookPlatform;
  let token: string;
  beforeAll(async () => {
    p = await startWebhookPlatform();
    p.hosts["intranet.example.test"] = ["10.20.30.40"];
    p.hosts["metadata-alias.example.test"] = ["169.254.169.254"];
    p.hosts["public.example.test"] = ["93.184.215.14"];
    token = await p.token();
  });
  afterAll(() => p?.stop());

  const create = (json: unknown, init: { token?: string; headers?: Record<string, string> } = {}) =>
    p.request("/v1/api/webhooks/subscriptions", {
      method: "POST",
      token: init.token ?? token,
      json,
      headers: init.headers,
    });

  it("creates, reads, lists, updates and deletes a subscription; the secret is shown once", async () => {
    const response = await create({
      url: "https://public.example.test/hooks",
      events: ["call.*", "message.delivered"],
      description: "ops",
    });
    expect(response.status).toBe(201);
    const created = (await response.json()) as Subscription;
    expect(created).toMatchObject({
      url: "https://public.example.test/hooks",
      events: ["call.*", "message.delivered"],
      description: "ops",
      status: "active",
      disabled_reason: null,
      previous_secret_expires_at: null,
    });
    expect(created.id).toMatch(/^whs_[0-9a-z]{26}$/);
    expect(created.secret).toMatch(/^whsec_/);
    expect(response.headers.get("location")).toBe(`/v1/api/webhooks/subscriptions/${created.id}`);

    const got = (await (
      await p.request(`/v1/api/webhooks/subscriptions/${created.id}`, { token })
    ).json()) as Subscription;
    expect(got).not.toHaveProperty("secret");
    expect(got.id).toBe(created.id);

    const patched = await p.request(`/v1/api/webhooks/subscriptions/${created.id}`, {
      method: "PATCH",
      token,
      json: { events: ["number.held"], description: null, status: "paused" },
    });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({
      events: ["number.held"],
      description: null,
      status: "paused",
    });

    const rotated = await p.request(`/v1/api/webhooks/subscriptions/${created.id}/rotate-secret`, {
      method: "POST",
      token,
    });
    expect(rotated.status).toBe(200);
    const withSecret = (await rotated.json()) as Subscription;
    expect(withSecret.secret).toMatch(/^whsec_/);
    expect(withSecret.secret).not.toBe(created.secret);
    expect(Date.parse(withSecret.previous_secret_expires_at!) - Date.now()).toBeGreaterThan(
      23 * 3600_000,
    );

    const paused = await p.request(`/v1/api/webhooks/subscriptions/${created.id}/test`, {
      method: "POST",
      token,
    });
    expect(paused.status).toBe(409);
    expect(((await paused.json()) as Problem).code).toBe("INVALID_STATE");

    const deleted = await p.request(`/v1/api/webhooks/subscriptions/${created.id}`, {
      method: "DELETE",
      token,
    });
    expect(deleted.status).toBe(204);
    expect(
      (await p.request(`/v1/api/webhooks/subscriptions/${created.id}`, { token })).status,
    ).toBe(404);
    expect(
      (await p.request(`/v1/api/webhooks/subscriptions/${created.id}`, { method: "DELETE", token }))
        .status,
    ).toBe(404);
  });

  it("pages the listing newest first with Link rel=next", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const r = await create({ url: `https://public.example.test/${i}`, events: ["*"] });
      ids.push(((await r.json()) as Subscription).id);
    }
    const seen: string[] = [];
    let path: string | null = "/v1/api/webhooks/subscriptions?limit=2";
    while (path) {
      const r: Response = await p.request(path, { token });
      expect(r.status).toBe(200);
      const page = (await r.json()) as {
        data: Subscription[];
        next_cursor: string | null;
        has_more: boolean;
      };
      seen.push(...page.data.map((s) => s.id));
      const link = r.headers.get("link");
      path = page.has_more ? /<([^>]+)>; rel="next"/.exec(link ?? "")![1]! : null;
    }
    expect(seen.filter((id) => ids.includes(id))).toEqual([...ids].reverse());
    expect(new Set(seen).size).toBe(seen.length);
  });

  it("answers bad input with 422 validation-failed and JSON pointers, and changes nothing", async () => {
    const before = await p.pools.webhook.query(
      "SELECT count(*)::int AS n FROM webhook.subscriptions",
    );
    const cases: [unknown, string[]][] = [
      [{ events: ["*"] }, ["#/url"]],
      [{ url: "https://public.example.test", events: [] }, ["#/events"]],
      [
        { url: "https://public.example.test", events: ["call.*", "bogus.event", "nope.*"] },
        ["#/events/1", "#/events/2"],
      ],
      [{ url: "not a url", events: ["*"] }, ["#/url"]],
      [{ url: "https://public.example.test", events: ["*"], colour: "red" }, ["#/colour"]],
      [
        { url: "https://public.example.test", events: ["*"], description: "x".repeat(501) },
        ["#/description"],
      ],
    ];
    for (const [body, pointers] of cases) {
      const r = await create(body);
      expect(r.status, JSON.stringify(body)).toBe(422);
      const problem = (await r.json()) as Problem;
      expect(problem.code).toBe("VALIDATION_FAILED");
      expect(problem.errors!.map((e) => e.pointer).sort()).toEqual(pointers);
    }
    const after = await p.pools.webhook.query(
      "SELECT count(*)::int AS n FROM webhook.subscriptions",
    );
    expect(after.rows[0].n).toBe(before.rows[0].n);

    const { id } = (await (
      await create({ url: "https://public.example.test/v", events: ["*"] })
    ).json()) as Subscription;
    const badStatus = await p.request(`/v1/api/webhooks/subscriptions/${id}`, {
      method: "PATCH",
      token,
      json: { status: "disabled" },
    });
    expect(badStatus.status).toBe(422);
    const badQuery = await p.request(
      `/v1/api/webhooks/subscriptions/${id}/deliveries?status=lost`,
      { token },
    );
    expect(badQuery.status).toBe(422);
    expect(((await badQuery.json()) as Problem).errors![0]!.pointer).toBe("#/query/status");
  });

  it("refuses every unsafe URL with 422 unsafe-webhook-url", async () => {
    const unsafe = [
      "https://127.0.0.1/hook",
      "https://[::1]/hook",
      "https://10.1.2.3/hook",
      "https://172.16.0.10/hook",
      "https://172.31.255.254/hook",
      "https://192.168.1.1/hook",
      "https://169.254.169.254/latest/meta-data/",
      "https://100.64.0.1/hook",
      "https://[::ffff:127.0.0.1]/hook",
      "https://[::ffff:10.0.0.1]/hook",
      "https://[fd00::1]/hook",
      "https://[fe80::1]/hook",
      "https://224.0.0.1/hook",
      "https://0.0.0.0/hook",
      "https://2130706433/hook", // 127.0.0.1 in decimal
      "https://0177.0.0.1/hook", // octal
      "https://0x7f.0.0.1/hook", // hex
      "https://017700000001/hook", // one octal number
      "https://127.1/hook",
      "https://intranet.example.test/hook", // resolves to 10.20.30.40
      "https://metadata-alias.example.test/", // resolves to 169.254.169.254
      "https://metadata.google.internal/computeMetadata/v1/",
      "http://public.example.test/hook", // https required
      "ftp://public.example.test/hook",
      "file:///etc/passwd",
      "gopher://public.example.test/",
      "https://user:pass@public.example.test/hook",
    ];
    for (const url of unsafe) {
      const r = await create({ url, events: ["*"] });
      expect(r.status, url).toBe(422);
      const problem = (await r.json()) as Problem;
      expect(problem.code, url).toBe("UNSAFE_WEBHOOK_URL");
      expect(problem.type).toMatch(/\/unsafe-webhook-url$/);
      expect(problem.detail.length).toBeGreaterThan(5);
    }
    // Also on update.
    const { id } = (await (
      await create({ url: "https://public.example.test/u", events: ["*"] })
    ).json()) as Subscription;
    const r = await p.request(`/v1/api/webhooks/subscriptions/${id}`, {
      method: "PATCH",
      token,
      json: { url: "https://192.168.0.1/x" },
    });
    expect(r.status).toBe(422);
    expect(((await r.json()) as Problem).code).toBe("UNSAFE_WEBHOOK_URL");
    // The exempt host (localhost here) may use plain http.
    expect((await create({ url: "http://localhost:9/hook", events: ["*"] })).status).toBe(201);
  });

  it("accepts a public host that does not resolve now: it is checked at every delivery", async () => {
    const r = await create({ url: "https://does-not-resolve.invalid/hook", events: ["*"] });
    expect(r.status).toBe(201);
  });

  it("keeps accounts apart (404) and enforces scopes (403)", async () => {
    const { id } = (await (
      await create({ url: "https://public.example.test/mine", events: ["*"] })
    ).json()) as Subscription;
    const other = await p.token(undefined, "other");
    for (const [method, path] of [
      ["GET", `/v1/api/webhooks/subscriptions/${id}`],
      ["PATCH", `/v1/api/webhooks/subscriptions/${id}`],
      ["DELETE", `/v1/api/webhooks/subscriptions/${id}`],
      ["POST", `/v1/api/webhooks/subscriptions/${id}/test`],
      ["POST", `/v1/api/webhooks/subscriptions/${id}/rotate-secret`],
      ["GET", `/v1/api/webhooks/subscriptions/${id}/deliveries`],
    ] as const) {
      const r = await p.request(path, {
        method,
        token: other,
        ...(method === "PATCH" ? { json: {} } : {}),
      });
      expect(r.status, `${method} ${path}`).toBe(404);
    }
    const list = (await (
      await p.request("/v1/api/webhooks/subscriptions", { token: other })
    ).json()) as { data: unknown[] };
    expect(list.data).toEqual([]);

    const reader = await p.token("webhooks:read");
    const denied = await create(
      { url: "https://public.example.test/r", events: ["*"] },
      { token: reader },
    );
    expect(denied.status).toBe(403);
    expect(denied.headers.get("www-authenticate")).toContain('scope="webhooks:write"');
    expect((await p.request("/v1/api/webhooks/subscriptions", { token: reader })).status).toBe(200);
  });

  it("one Idempotency-Key creates one subscription, also under concurrent retries", async () => {
    const headers = { "Idempotency-Key": `whs-create-${Date.now()}` };
    const body = { url: "https://public.example.test/idem", events: ["number.*"] };
    const responses = await Promise.all(Array.from({ length: 6 }, () => create(body, { headers })));
    const statuses = responses.map((r) => r.status);
    expect(statuses.every((s) => s === 201 || s === 409)).toBe(true);
    const ids = new Set(
      await Promise.all(
        responses
          .filter((r) => r.status === 201)
          .map(async (r) => ((await r.json()) as Subscription).id),
      ),
    );
    expect(ids.size).toBe(1);
    const { rows } = await p.pools.webhook.query(
      "SELECT count(*)::int AS n FROM webhook.subscriptions WHERE url = $1",
      ["https://public.example.test/idem"],
    );
    expect(rows[0].n).toBe(1);
  });
});
