import { randomBytes } from "node:crypto";
import { inspect } from "node:util";
import { Webhook } from "standardwebhooks";
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  createSwitchboard,
  paginate,
  PagedList,
  retryAfterSeconds,
  retryDelaySeconds,
  SwitchboardProblem,
  unwrap,
  recentWebhookIds,
  verifyWebhook,
  WebhookReplayError,
  type WebhookEventType,
  WebhookVerificationError,
} from "@switchboard/sdk";

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json", ...headers },
  });

/** A fetch answering from `answer(request)`, recording every request it sees. */
function fakeFetch(answer: (request: Request) => Response) {
  const requests: Request[] = [];
  const fetch = (async (input: Request | string | URL) => {
    const request = input instanceof Request ? input : new Request(input);
    requests.push(request);
    return answer(request);
  }) as typeof globalThis.fetch;
  return { fetch, requests };
}

const token = () => json(200, { access_token: "t1", token_type: "Bearer", expires_in: 900 });

const client = (fetch: typeof globalThis.fetch, baseUrl = "https://sdk.test") =>
  createSwitchboard({ baseUrl, clientId: "cli_x", clientSecret: "secret", fetch });

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
    await expect(sb.token()).rejects.toThrow(/401 invalid-client: bad secret/);
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

  it("verifies what the standardwebhooks reference library signs, and nothing else", async () => {
    const secret = `whsec_${randomBytes(24).toString("base64")}`;
    const payload = JSON.stringify({ type: "number.assigned", data: { id: "num_1" } });
    const at = new Date();
    const id = "evt_01jd2k8w7c3q9v0m5n6p7r8s9t";
    const headers = {
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": new Webhook(secret).sign(id, at, payload),
    };
    expect((await verifyWebhook<{ type: string }>(secret, headers, payload)).type).toBe(
      "number.assigned",
    );
    expect(await verifyWebhook(secret, new Headers(headers), payload)).toBeTruthy();
    const other = `whsec_${randomBytes(24).toString("base64")}`;
    await expect(verifyWebhook(other, headers, payload)).rejects.toThrow(WebhookVerificationError);
    await expect(verifyWebhook(secret, headers, `${payload} `)).rejects.toThrow(
      WebhookVerificationError,
    );
    await expect(
      verifyWebhook(secret, headers, payload, { now: at.getTime() / 1000 + 301 }),
    ).rejects.toThrow(/tolerance/);
    // Several signatures (a secret being rotated): any one matching is enough.
    const both = { ...headers, "webhook-signature": `v1,AAAA ${headers["webhook-signature"]}` };
    expect(await verifyWebhook(secret, both, payload)).toBeTruthy();
  });

  it("refuses a second delivery of one webhook-id when asked to de-duplicate, and only after verifying", async () => {
    const secret = `whsec_${randomBytes(24).toString("base64")}`;
    const payload = JSON.stringify({ type: "number.assigned" });
    const at = new Date();
    const signed = (id: string, body = payload) => ({
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": new Webhook(secret).sign(id, at, body),
    });
    const firstDelivery = recentWebhookIds();
    const id = "evt_01jd2k8w7c3q9v0m5n6p7r8s9a";
    const event = await verifyWebhook(secret, signed(id), payload, { firstDelivery });
    // Typed from the document's webhooks section by default.
    expectTypeOf(event.type).toEqualTypeOf<WebhookEventType>();
    expect(event.type).toBe("number.assigned");
    await expect(verifyWebhook(secret, signed(id), payload, { firstDelivery })).rejects.toThrow(
      WebhookReplayError,
    );
    // A forgery with a fresh id is refused for its signature, and does not use the id up.
    const forged = { ...signed("evt_01jd2k8w7c3q9v0m5n6p7r8s9b"), "webhook-signature": "v1,AAAA" };
    await expect(verifyWebhook(secret, forged, payload, { firstDelivery })).rejects.toThrow(
      /no signature/,
    );
    expect(
      await verifyWebhook(secret, signed("evt_01jd2k8w7c3q9v0m5n6p7r8s9b"), payload, {
        firstDelivery,
      }),
    ).toBeTruthy();
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

  it("drops a trailing /v1 from baseUrl: paths carry it, and OAuth lives at the root", async () => {
    const { fetch, requests } = fakeFetch((request) =>
      request.url.endsWith("/oauth/token") ? token() : json(200, { status: "ok" }),
    );
    const sb = client(fetch, "https://sdk.test/v1/");
    await sb.api.GET("/v1/api/health");
    expect(requests.map((r) => r.url)).toEqual([
      "https://sdk.test/oauth/token",
      "https://sdk.test/v1/api/health",
    ]);
  });

  it("raises a refused token request as a SwitchboardProblem: bad secret, lockout, unavailable", async () => {
    const refusing = (reply: () => Response) =>
      createSwitchboard({
        baseUrl: "https://sdk.test",
        clientId: "cli_x",
        clientSecret: "secret",
        attempts: 1,
        fetch: fakeFetch(reply).fetch,
      }).token();
    const badSecret = await refusing(() =>
      json(401, { error: "invalid_client", error_description: "client authentication failed" }),
    ).catch((error: unknown) => error);
    expect(badSecret).toBeInstanceOf(SwitchboardProblem);
    expect(badSecret).toMatchObject({ status: 401, kind: "invalid-client", retryAfter: undefined });
    expect((badSecret as SwitchboardProblem).problem.oauth_error).toBe("invalid_client");

    const locked = await refusing(() =>
      json(
        401,
        { error: "invalid_client", error_description: "client authentication failed" },
        { "Retry-After": "8" },
      ),
    ).catch((error: unknown) => error);
    expect(locked).toMatchObject({ status: 401, kind: "client-locked", retryAfter: 8 });
    expect(String(locked)).toMatch(/^SwitchboardProblem: 401 client-locked: .*locked for 8 s/);

    const unavailable = await refusing(() =>
      json(
        503,
        {
          type: "https://sdk.test/v1/errors/service-unavailable",
          title: "Service unavailable",
          status: 503,
          code: "SERVICE_UNAVAILABLE",
          detail: "the identity store is unavailable",
          instance: "urn:switchboard:request:req_1",
        },
        { "Retry-After": "1" },
      ),
    ).catch((error: unknown) => error);
    expect(unavailable).toMatchObject({ status: 503, kind: "service-unavailable", retryAfter: 1 });

    const scope = await refusing(() =>
      json(400, { error: "invalid_scope", error_description: "unknown scope x" }),
    ).catch((error: unknown) => error);
    expect(scope).toMatchObject({ status: 400, kind: "invalid-scope" });
  });

  it("prints an uncaught problem briefly: its message and field errors, not the Response", () => {
    const problem = ((): SwitchboardProblem => {
      try {
        unwrap({
          error: {
            type: "https://sdk.test/v1/errors/validation-failed",
            title: "Validation failed",
            status: 422,
            code: "VALIDATION_FAILED",
            detail: "the request body is invalid",
            instance: "urn:switchboard:request:req_9",
            errors: [{ pointer: "#/to", detail: "must be E.164" }],
          },
          response: json(422, {}, { "X-Request-Id": "req_9" }),
        });
      } catch (error) {
        return error as SwitchboardProblem;
      }
      throw new Error("unwrap returned");
    })();
    expect(String(problem)).toBe(
      "SwitchboardProblem: 422 validation-failed: the request body is invalid",
    );
    const printed = inspect(problem);
    expect(printed).toContain("at #/to: must be E.164");
    expect(printed).toContain("urn:switchboard:request:req_9");
    expect(printed).not.toMatch(/Response|Headers|bodyUsed/);
    expect(printed.split("\n").length).toBeLessThan(20);
    expect(problem.requestId).toBe("req_9");
    expect(problem.response.status).toBe(422);
  });

  it("adds jitter to the Retry-After wait: at least the asked seconds, at most a fifth more", () => {
    expect(retryDelaySeconds(10, 1, () => 0)).toBe(10);
    expect(retryDelaySeconds(10, 1, () => 0.999)).toBeCloseTo(11.998);
    expect(retryDelaySeconds(0, 1, () => 0.5)).toBe(0.125);
    // Without Retry-After: 1, 2, 4 s, jittered too.
    expect(retryDelaySeconds(undefined, 3, () => 0.5)).toBeCloseTo(4.4);
    const waits = Array.from({ length: 50 }, () => retryDelaySeconds(2, 1));
    expect(Math.min(...waits)).toBeGreaterThanOrEqual(2);
    expect(new Set(waits).size).toBeGreaterThan(1);
  });

  it("pages the helpers' listings: awaited the first page, iterated every item by cursor", async () => {
    const pages: Record<string, unknown> = {
      "": { data: [{ id: "ue_1" }, { id: "ue_2" }], next_cursor: "c2", has_more: true },
      c2: { data: [{ id: "ue_3" }], next_cursor: null, has_more: false },
    };
    const { fetch, requests } = fakeFetch((request) => {
      if (request.url.endsWith("/oauth/token")) return token();
      return json(200, pages[new URL(request.url).searchParams.get("cursor") ?? ""]);
    });
    const sb = client(fetch);
    const listing = sb.usage.list({ kind: "call.placed", limit: 2 });
    expect(listing).toBeInstanceOf(PagedList);
    expect((await listing).data).toHaveLength(2);
    const ids: string[] = [];
    for await (const record of listing) ids.push(record.id);
    expect(ids).toEqual(["ue_1", "ue_2", "ue_3"]);
    const queries = requests
      .filter((r) => r.url.includes("/usage/events"))
      .map((r) => new URL(r.url).search);
    expect(queries).toEqual([
      "?kind=call.placed&limit=2",
      "?kind=call.placed&limit=2",
      "?kind=call.placed&limit=2&cursor=c2",
    ]);
  });

  it("sends the helpers' writes to their operations, with a chosen or a fresh Idempotency-Key", async () => {
    const { fetch, requests } = fakeFetch((request) =>
      request.url.endsWith("/oauth/token") ? token() : json(201, { id: "x" }),
    );
    const sb = client(fetch);
    await sb.numbers.hold({ number: "+14155550100" }, { idempotencyKey: "hold-1" });
    await sb.calls.place({ agent: "a", from: "+14155550100", to: "+14155550101" });
    await sb.messages.send({
      channel: "sms",
      consent_id: "cns_1",
      from: "+14155550100",
      template_id: "tpl_1",
      to: "+14155550101",
    });
    const writes = requests.filter((r) => r.method === "POST" && !r.url.endsWith("/oauth/token"));
    expect(writes.map((r) => new URL(r.url).pathname)).toEqual([
      "/v1/api/numbers/hold",
      "/v1/api/calls/outbound",
      "/v1/api/messages/send",
    ]);
    expect(writes[0]!.headers.get("idempotency-key")).toBe("hold-1");
    expect(writes[1]!.headers.get("idempotency-key")).toMatch(/^[0-9a-f-]{36}$/);
  });
});
