import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assignNumbers } from "@switchboard/test-support/fixtures/numbers";
import { startTestPlatform, type TestPlatform } from "@switchboard/test-support/platform";

/**
 * The embedded default (PGlite behind its socket server, in-process queue and buckets) under
 * bursts: every pool of the platform together fits what the PGlite server accepts, so no
 * request sees a dropped connection, and concurrent retries of one key wait and replay.
 */
describe("embedded mode under bursts (PGlite)", () => {
  let p: TestPlatform;
  let token: string;
  let from: string | undefined;

  beforeAll(async () => {
    p = await startTestPlatform({
      database: "pglite",
      seed: 300,
      // Generous buckets: this test is about connections, not the rate limit.
      env: { RATE_LIMITS: "*=100000/100000" },
      serviceEnv: { SANDBOX_CALL_SECONDS: "0.5", SANDBOX_RING_DELAY_MS: "20" },
    });
    token = await p.token();
    expect(
      (await p.request("/v1/api/agents", { method: "POST", token, json: { name: "burst" } }))
        .status,
    ).toBe(201);
    [from] = await assignNumbers(p, token, { capabilities: "voice", count: 1 });
  });
  afterAll(async () => p?.stop());

  const mixed = (i: number): Promise<Response> => {
    switch (i % 8) {
      case 0:
        return p.request("/v1/api/numbers/search?region=CA&limit=5", { token });
      case 1:
        return p.request("/v1/api/webhooks/subscriptions", { token });
      case 2:
        return p.request("/v1/api/agents", { token });
      case 3:
        return p.request("/v1/api/usage/events?limit=5", { token });
      case 4:
        return p.request("/v1/api/calls", { token });
      case 5:
        return p.request("/v1/api/agents", {
          method: "POST",
          token,
          json: { name: `agent-${i}-${Date.now()}` },
        });
      case 6:
        return p.request("/v1/api/numbers", { token });
      default:
        return p.request("/v1/api/messages", { token });
    }
  };

  it("answers 100 concurrent requests of mixed routes, three times over, without a 5xx", async () => {
    for (let round = 0; round < 3; round += 1) {
      const replies = await Promise.all(Array.from({ length: 100 }, (_, i) => mixed(i)));
      const statuses = replies.map((r) => r.status);
      const texts = await Promise.all(replies.map((r) => r.text()));
      texts.forEach((t, i) => statuses[i]! >= 500 && console.log("DEBUG", i, t));
      const bad = replies.findIndex((r) => r.status >= 500);
      if (bad >= 0) console.log("DEBUG", bad, await mixed(bad).then((r) => r.text()));
      expect(statuses.filter((s) => s >= 500)).toEqual([]);
      expect(statuses.every((s) => s === 200 || s === 201)).toBe(true);
    }
  });

  it("25 concurrent retries of one Idempotency-Key: one call placed, every retry replays it", async () => {
    const key = `burst-${Date.now()}`;
    const replies = await Promise.all(
      Array.from({ length: 25 }, () =>
        p.request("/v1/api/calls/outbound", {
          method: "POST",
          token,
          headers: { "Idempotency-Key": key },
          json: { to: "+15550100001", from, agent: "burst" },
        }),
      ),
    );
    const bodies = await Promise.all(replies.map(async (r) => (await r.json()) as { id: string }));
    expect(replies.map((r) => r.status)).toEqual(Array(25).fill(201));
    expect(new Set(bodies.map((b) => b.id)).size).toBe(1);
    expect(replies.filter((r) => r.headers.get("idempotent-replayed") === "true")).toHaveLength(24);
  });
});
