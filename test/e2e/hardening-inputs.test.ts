import { createHash } from "node:crypto";
import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assignNumbers } from "@switchboard/test-support/fixtures/numbers";
import { startTestPlatform, type TestPlatform } from "@switchboard/test-support/platform";

interface Problem {
  type: string;
  status: number;
  code: string;
  detail: string;
  errors?: { pointer: string; detail: string }[];
  route_id?: string;
}

/**
 * Bad input an outside probe found answered 500, each now a typed 4xx problem that changes
 * nothing, on the embedded default (PGlite): NUL bytes and lone surrogates, deep nesting, bad
 * percent-encoding in a path, forged cursors, socket-level parse errors, and deleting an agent
 * or a seat a route still uses.
 */
describe("hardening: bad input gets a typed 4xx problem", () => {
  let p: TestPlatform;
  let token: string;

  beforeAll(async () => {
    p = await startTestPlatform({ database: "pglite", seed: 200, contract: "off" });
    token = await p.token();
  });
  afterAll(async () => p?.stop());

  const problemOf = async (response: Response, status: number, kind: string) => {
    expect(response.status, await response.clone().text()).toBe(status);
    expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    const problem = (await response.json()) as Problem;
    expect(problem.type).toMatch(new RegExp(`/${kind}$`));
    expect(problem.status).toBe(status);
    return problem;
  };
  const raw = (path: string, init: { method?: string; body: string; key?: string }) =>
    p.request(path, {
      method: init.method ?? "POST",
      token,
      headers: {
        "Content-Type": "application/json",
        ...(init.key ? { "Idempotency-Key": init.key } : {}),
      },
      body: init.body,
    });

  it.each([
    ["/v1/api/agents", "POST", '{"name":"nul-agent","description":"a\\u0000b"}', "#/description"],
    ["/v1/api/seats", "POST", '{"name":"desk\\u0000"}', "#/name"],
    [
      "/v1/api/webhooks/subscriptions",
      "POST",
      '{"url":"https://example.com/h","events":["*"],"description":"\\u0000"}',
      "#/description",
    ],
    [
      "/v1/api/templates",
      "POST",
      '{"name":"t","channels":["sms"],"body":"code \\u0000"}',
      "#/body",
    ],
    [
      "/v1/api/sandbox/messages/inbound",
      "POST",
      '{"from":"+15550200000","to":"+15550200001","body":"STOP\\u0000"}',
      "#/body",
    ],
    ["/v1/api/agents", "POST", '{"name":"surrogate","description":"\\ud800"}', "#/description"],
    ["/v1/api/agents", "POST", '{"name":"x","description":"ok","\\u0000":1}', "#/\u0000"],
  ])(
    "%s %s with a NUL or a lone surrogate → 422 at its pointer",
    async (path, method, body, at) => {
      const response = await raw(path, { method, body });
      const problem = await problemOf(response, 422, "validation-failed");
      expect(problem.errors?.map((e) => e.pointer)).toContain(at);
    },
  );

  it("the same with an Idempotency-Key (the fingerprint never sees it) and nothing is stored", async () => {
    const before = (await (await p.request("/v1/api/agents", { token })).json()) as {
      data: unknown[];
    };
    const body = '{"name":"keyed","description":"\\ud800"}';
    await problemOf(
      await raw("/v1/api/agents", { body, key: "surrogate-1" }),
      422,
      "validation-failed",
    );
    const after = (await (await p.request("/v1/api/agents", { token })).json()) as {
      data: unknown[];
    };
    expect(after.data.length).toBe(before.data.length);
  });

  it("nesting deeper than 64 levels → 400 malformed-request, with or without a key", async () => {
    const deep = `{"name":"deep","description":${"[".repeat(10_000)}${"]".repeat(10_000)}}`;
    await problemOf(await raw("/v1/api/agents", { body: deep }), 400, "malformed-request");
    await problemOf(
      await raw("/v1/api/agents", { body: deep, key: "deep-1" }),
      400,
      "malformed-request",
    );
  });

  it("a NUL or a lone surrogate in a query parameter → 422 at #/query/<name>", async () => {
    const response = await p.request("/v1/api/numbers/search?region=C%00A", { token });
    const problem = await problemOf(response, 422, "validation-failed");
    expect(problem.errors?.[0]?.pointer).toBe("#/query/region");
    const surrogate = await p.request("/v1/api/usage/events?resource_id=%ED%A0%80", { token });
    expect(surrogate.status).toBeLessThan(500);
  });

  it("a NUL in a path parameter names no resource → 404", async () => {
    await problemOf(await p.request("/v1/api/agents/agt_%00", { token }), 404, "not-found");
    await problemOf(await p.request("/v1/api/usage/events/%00", { token }), 404, "not-found");
    await problemOf(await p.request("/v1/errors/%00"), 404, "not-found");
  });

  it.each(["/v1/api/agents/%E0%A4%A", "/v1/errors/%ff", "/v1/api/seats/%C0"])(
    "bad percent-encoding in %s → 400 problem, no token needed",
    async (path) => {
      await problemOf(await p.request(path), 400, "malformed-request");
    },
  );

  describe("cursors are signed and their positions checked", () => {
    const unkeyed = (position: string[], binding: string) => {
      const digest = (text: string, length: number) =>
        createHash("sha256").update(text).digest("base64url").slice(0, length);
      const body = JSON.stringify([1, digest(binding, 16), ...position]);
      return `${Buffer.from(body).toString("base64url")}.${digest(body, 8)}`;
    };

    it.each([
      ["/v1/api/usage/events", ["2026", "use_01jd0000000000000000000000"]],
      ["/v1/api/usage/events", ["2026-02-30T00:00:00.000000Z", "use_\u0000"]],
      ["/v1/api/numbers", ["2026-02-30T00:00:00.000000Z", "num_x"]],
      ["/v1/api/webhooks/subscriptions", ["whs_\u0000"]],
      ["/v1/api/agents", ["agt_01jd0000000000000000000000"]],
    ])("a forged cursor on %s → 400 invalid-cursor", async (path, position) => {
      const cursor = unkeyed(position, `${path}:${p.accountId}`);
      const response = await p.request(`${path}?cursor=${encodeURIComponent(cursor)}`, { token });
      await problemOf(response, 400, "invalid-cursor");
    });

    it("a real cursor still pages", async () => {
      await assignNumbers(p, token, { capabilities: "voice", count: 3 });
      const first = (await (await p.request("/v1/api/numbers?limit=2", { token })).json()) as {
        data: { number: string }[];
        next_cursor: string | null;
      };
      expect(first.next_cursor).toBeTruthy();
      const second = await p.request(
        `/v1/api/numbers?limit=2&cursor=${encodeURIComponent(first.next_cursor!)}`,
        { token },
      );
      expect(second.status).toBe(200);
      const page = (await second.json()) as { data: { number: string }[] };
      expect(page.data.length).toBeGreaterThan(0);
      const seen = new Set(first.data.map((n) => n.number));
      expect(page.data.every((n) => !seen.has(n.number))).toBe(true);
    });
  });

  describe("socket-level parse errors are problem+json too", () => {
    const send = (text: string) =>
      new Promise<string>((resolve, reject) => {
        const { port } = new URL(p.url);
        const socket = connect(Number(port), "127.0.0.1", () => socket.write(text));
        let reply = "";
        socket.on("data", (chunk) => (reply += chunk.toString()));
        socket.on("end", () => resolve(reply));
        socket.on("error", reject);
      });
    const parse = (reply: string) => {
      const [head, body] = reply.split("\r\n\r\n") as [string, string];
      return { status: Number(head.split(" ")[1]), head, body: JSON.parse(body) as Problem };
    };

    it("a malformed request line → 400 malformed-request", async () => {
      const reply = parse(await send("GARBAGE\r\n\r\n"));
      expect(reply.status).toBe(400);
      expect(reply.head).toMatch(/content-type: application\/problem\+json/i);
      expect(reply.head).toMatch(/connection: close/i);
      expect(reply.body.code).toBe("MALFORMED_REQUEST");
    });

    it("header fields over the limit → 431 headers-too-large", async () => {
      const big = `GET /v1/api/health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`;
      const reply = parse(await send(big));
      expect(reply.status).toBe(431);
      expect(reply.body.code).toBe("HEADERS_TOO_LARGE");
      expect(reply.body.type).toMatch(/\/headers-too-large$/);
    });
  });

  it("deleting an agent or a seat a route still uses → 409 conflict naming the route", async () => {
    const [number] = await assignNumbers(p, token, { capabilities: "voice", count: 1 });
    const agent = await p.request("/v1/api/agents", {
      method: "POST",
      token,
      json: { name: "routed" },
    });
    const agentId = ((await agent.json()) as { id: string }).id;
    const seat = await p.request("/v1/api/seats", { method: "POST", token, json: { name: "d" } });
    const seatId = ((await seat.json()) as { id: string }).id;
    const route = await p.request("/v1/api/routes", {
      method: "POST",
      token,
      json: { name: "main", numbers: [number], agent: "routed", seat_id: seatId },
    });
    expect(route.status).toBe(201);
    const routeId = ((await route.json()) as { id: string }).id;
    for (const path of [`/v1/api/agents/${agentId}`, `/v1/api/seats/${seatId}`]) {
      const refused = await p.request(path, { method: "DELETE", token });
      const problem = await problemOf(refused, 409, "conflict");
      expect(problem.detail).toContain(routeId);
      expect(problem.route_id).toBe(routeId);
      expect((await p.request(path, { token })).status).toBe(200);
    }
  });
});
