import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import {
  createSwitchboard,
  paginate,
  retryAfterSeconds,
  verifyWebhook,
  WebhookVerificationError,
} from "@switchboard/sdk";

/** The parts a generator cannot give: retries, Idempotency-Key on writes, token reuse. */
describe("@switchboard/sdk helpers", () => {
  it("reads Retry-After as seconds or an HTTP date", () => {
    expect(retryAfterSeconds("3")).toBe(3);
    expect(retryAfterSeconds(null)).toBeUndefined();
    const inTwo = new Date(Date.now() + 2_000).toUTCString();
    expect(retryAfterSeconds(inTwo)).toBeGreaterThan(0);
  });

  it("retries 429 and 503 as Retry-After says, with the same Idempotency-Key, and reuses its token", async () => {
    const seen: { url: string; key: string | null; auth: string | null }[] = [];
    const answers = [
      new Response(JSON.stringify({ access_token: "t1", expires_in: 900 }), { status: 200 }),
      new Response("{}", { status: 429, headers: { "Retry-After": "0" } }),
      new Response("{}", { status: 503, headers: { "Retry-After": "0" } }),
      new Response(JSON.stringify({ id: "agt_1" }), {
        status: 201,
        headers: { "Content-Type": "application/json" },
      }),
      new Response(JSON.stringify({ data: [], next_cursor: null, has_more: false }), {
        status: 200,
        headers: { "Content-Type": "application/json" },
      }),
    ];
    const fake = (async (input: Request | string | URL) => {
      const request = input instanceof Request ? input : new Request(input);
      seen.push({
        url: request.url,
        key: request.headers.get("idempotency-key"),
        auth: request.headers.get("authorization"),
      });
      return answers.shift()!;
    }) as typeof fetch;
    const sb = createSwitchboard({
      baseUrl: "http://sdk.test",
      clientId: "cli_x",
      clientSecret: "secret",
      fetch: fake,
    });
    const created = await sb.api.POST("/v1/api/agents", { body: { name: "x" } });
    expect(created.response.status).toBe(201);
    const writes = seen.filter((s) => s.url.endsWith("/v1/api/agents"));
    expect(writes).toHaveLength(3);
    expect(new Set(writes.map((w) => w.key)).size).toBe(1);
    expect(writes[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(writes.every((w) => w.auth === "Bearer t1")).toBe(true);
    await sb.api.GET("/v1/api/agents");
    // One token request for both calls; a read carries no Idempotency-Key.
    expect(seen.filter((s) => s.url.endsWith("/oauth/token"))).toHaveLength(1);
    expect(seen.at(-1)!.key).toBeNull();
  });

  it("sends client_secret_basic and grant_type to the token endpoint, and reports its errors", async () => {
    const requests: Request[] = [];
    const fake = (async (input: Request | string | URL) => {
      const request = input instanceof Request ? input : new Request(input);
      requests.push(request);
      return new Response(
        JSON.stringify({ error: "invalid_client", error_description: "bad secret" }),
        { status: 401, headers: { "Content-Type": "application/json" } },
      );
    }) as typeof fetch;
    const sb = createSwitchboard({
      baseUrl: "http://sdk.test/",
      clientId: "cli_x",
      clientSecret: "s e:cret",
      scope: "numbers:read",
      fetch: fake,
    });
    await expect(sb.token()).rejects.toThrow(/401 invalid_client bad secret/);
    const [request] = requests;
    expect(request!.url).toBe("http://sdk.test/oauth/token");
    expect(request!.headers.get("content-type")).toBe("application/x-www-form-urlencoded");
    const basic = Buffer.from(request!.headers.get("authorization")!.slice(6), "base64");
    expect(basic.toString()).toBe("cli_x:s+e%3Acret");
    const form = new URLSearchParams(await request!.text());
    expect(Object.fromEntries(form)).toEqual({
      grant_type: "client_credentials",
      scope: "numbers:read",
    });
  });

  it("verifies what the standardwebhooks reference library signs, and nothing else", () => {
    const secret = `whsec_${randomBytes(24).toString("base64")}`;
    const payload = JSON.stringify({ type: "number.assigned", data: { id: "num_1" } });
    const at = new Date();
    const id = "evt_01jd2k8w7c3q9v0m5n6p7r8s9t";
    const headers = {
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": new Webhook(secret).sign(id, at, payload),
    };
    expect(verifyWebhook<{ type: string }>(secret, headers, payload).type).toBe("number.assigned");
    expect(verifyWebhook(secret, new Headers(headers), payload)).toBeTruthy();
    const other = `whsec_${randomBytes(24).toString("base64")}`;
    expect(() => verifyWebhook(other, headers, payload)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(secret, headers, `${payload} `)).toThrow(WebhookVerificationError);
    expect(() =>
      verifyWebhook(secret, headers, payload, { now: at.getTime() / 1000 + 301 }),
    ).toThrow(/tolerance/);
  });

  it("paginates a listing across pages by next_cursor", async () => {
    const pages: Record<string, { data: number[]; next_cursor: string | null; has_more: boolean }> =
      {
        first: { data: [1, 2], next_cursor: "c2", has_more: true },
        c2: { data: [3], next_cursor: null, has_more: false },
      };
    const seen: (string | undefined)[] = [];
    const items: number[] = [];
    for await (const item of paginate(async (cursor) => {
      seen.push(cursor);
      return pages[cursor ?? "first"]!;
    })) {
      items.push(item);
    }
    expect(items).toEqual([1, 2, 3]);
    expect(seen).toEqual([undefined, "c2"]);
  });
});
