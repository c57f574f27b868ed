import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RouteSpec } from "@switchboard/gateway/http/route-spec";
import {
  fuzzBody,
  fuzzHeaders,
  fuzzPathValue,
  fuzzQuery,
  seededRandom,
  shapeKeys,
  type Random,
} from "@switchboard/test-support/fuzz";
import { startTestPlatform, type TestPlatform } from "@switchboard/test-support/platform";

// `npm test` runs a fixed seed and a few thousand cases; FUZZ_CASES and FUZZ_SEED run more.
const cases = Number(process.env.FUZZ_CASES ?? 3_000);
const seed = Number(process.env.FUZZ_SEED ?? 20261124);
const concurrency = 8;

interface Sent {
  method: string;
  path: string;
  status: number;
  contentType: string;
  body: string;
}

/**
 * Generated bad bodies, queries, path parameters and headers against every route of the route
 * table, with a valid token and without one, on real PostgreSQL and Redis. No reply may be a
 * 5xx, and every error must be RFC 9457 problem+json (the token endpoint answers RFC 6749's
 * JSON errors instead, as that RFC requires).
 */
describe(`fuzzing every route (seed ${seed}, ${cases} cases)`, () => {
  let p: TestPlatform;
  let token: string;
  let routes: RouteSpec[];

  beforeAll(async () => {
    p = await startTestPlatform({
      database: "postgres",
      redis: true,
      seed: 100,
      contract: "off",
      // Buckets wide open so the cases reach the operations (the smoke keeps its own bucket).
      env: { RATE_LIMITS: "*=1000000/1000000,agent:smoke=2/0.01" },
    });
    token = await p.token();
    routes = p.gateway.routes;
  });
  afterAll(async () => p?.stop());

  function request(random: Random): { method: string; path: string; init: RequestInit } {
    const route = random.pick(routes);
    const prefix = /^\/(api|errors|admin)\//.test(route.path) ? "/v1" : "";
    const path = route.path.replace(/\{[a-z_]+\}/g, () => fuzzPathValue(random));
    const method = random.chance(0.05)
      ? random.pick(["PUT", "PATCH", "DELETE", "OPTIONS", "GET", "POST"])
      : route.method.toUpperCase();
    const headers = fuzzHeaders(random, random.chance(0.8) ? token : undefined);
    let body: string | undefined;
    if (method !== "GET" && method !== "HEAD" && (route.body || random.chance(0.2))) {
      if (route.bodyMediaType === "application/x-www-form-urlencoded" && random.chance(0.7)) {
        body = random.pick([
          "grant_type=client_credentials&client_id=a%00&client_secret=x",
          "grant_type=client_credentials&client_id=%ED%A0%80&client_secret=%00",
          "grant_type=%00",
          "grant_type=client_credentials&scope=%00",
          "grant_type=client_credentials&grant_type=x",
          "%%%",
        ]);
        headers["Content-Type"] = "application/x-www-form-urlencoded";
      } else {
        const generated = fuzzBody(random, shapeKeys(route.body));
        body = generated.text;
        if (generated.contentType) headers["Content-Type"] = generated.contentType;
      }
    }
    return {
      method,
      path: `${prefix}${path}${fuzzQuery(random, shapeKeys(route.query))}`,
      init: { method, headers, ...(body !== undefined ? { body } : {}) },
    };
  }

  async function send(random: Random): Promise<Sent | undefined> {
    const { method, path, init } = request(random);
    let response: Response;
    try {
      response = await fetch(`${p.url}${path}`, init);
    } catch (error) {
      // The client itself refused what it was asked to send (e.g. a header with CR LF).
      if (error instanceof TypeError) return undefined;
      throw error;
    }
    return {
      method,
      path: path.slice(0, 200),
      status: response.status,
      contentType: response.headers.get("content-type") ?? "",
      body: await response.text(),
    };
  }

  const json = (text: string): Record<string, unknown> | undefined => {
    try {
      return JSON.parse(text) as Record<string, unknown>;
    } catch {
      return undefined;
    }
  };

  const verdict = (sent: Sent): string | undefined => {
    if (sent.status >= 500) return "a 5xx";
    if (sent.status < 400) return undefined;
    if (sent.path.startsWith("/oauth/token") && sent.contentType.startsWith("application/json")) {
      const error = json(sent.body)?.error;
      return typeof error === "string" ? undefined : "an RFC 6749 error without `error`";
    }
    if (!sent.contentType.startsWith("application/problem+json")) return "not problem+json";
    if (sent.method === "HEAD") return undefined;
    const problem = json(sent.body);
    if (!problem) return "a problem that is not JSON";
    if (problem.status !== sent.status) return "a problem whose status differs";
    if (typeof problem.type !== "string" || typeof problem.title !== "string") {
      return "a problem without type or title";
    }
    return undefined;
  };

  it("answers every generated case with a 2xx–4xx, every error as problem+json", async () => {
    const random = seededRandom(seed);
    const failures: (Sent & { why: string })[] = [];
    const statuses = new Map<number, number>();
    let sentCount = 0;
    for (let start = 0; start < cases; start += concurrency) {
      const batch = Array.from({ length: Math.min(concurrency, cases - start) }, () =>
        send(random),
      );
      for (const sent of await Promise.all(batch)) {
        if (!sent) continue;
        sentCount += 1;
        statuses.set(sent.status, (statuses.get(sent.status) ?? 0) + 1);
        const why = verdict(sent);
        if (why) failures.push({ ...sent, body: sent.body.slice(0, 300), why });
      }
    }
    expect(failures.slice(0, 10)).toEqual([]);
    expect(sentCount).toBeGreaterThan(cases * 0.9);
    // The cases reach far: refusals of every kind, and successes too.
    expect([...statuses.keys()].filter((s) => s < 300).length).toBeGreaterThan(0);
    expect(statuses.get(422) ?? 0).toBeGreaterThan(0);
    expect(statuses.get(404) ?? 0).toBeGreaterThan(0);
    expect(statuses.get(401) ?? 0).toBeGreaterThan(0);
  }, 600_000);
});
