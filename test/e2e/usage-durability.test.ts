import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  requestIdOf,
  startUsagePlatform,
  type UsagePlatform,
} from "@switchboard/test-support/fixtures/usage-platform";

describe("the record path survives the usage service going away (PostgreSQL)", () => {
  let p: UsagePlatform;
  let token: string;
  beforeAll(async () => {
    p = await startUsagePlatform();
    token = await p.token();
  });
  afterAll(() => p?.stop());

  it("has each reply's record committed in the gateway's outbox before the reply reaches the client", async () => {
    await p.platform.stopUsage();
    try {
      for (const path of ["/api/numbers/search?limit=1", "/api/nothing", "/api/health"]) {
        const response = await p.request(path, { token });
        const requestId = requestIdOf(response);
        const { rows } = await p.platform.gateway.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM gateway.request_records WHERE request_id = $1",
          [requestId],
        );
        expect(rows[0]!.n, path).toBe(1);
      }
    } finally {
      await p.platform.restartUsage();
    }
  });

  it("loses no record and duplicates none when the usage service stops and restarts under traffic", async () => {
    const ids: string[] = [];
    const statuses = new Map<number, number>();
    let running = true;
    const paths = [
      "/api/numbers/search?limit=1",
      "/api/usage/events?limit=1",
      "/api/unknown",
      "/api/health",
    ];
    const client = async (worker: number) => {
      for (let i = 0; running; i += 1) {
        const path = paths[(worker + i) % paths.length]!;
        const response = await p.request(path, {
          token: worker % 3 === 0 && i % 5 === 0 ? undefined : token,
        });
        await response.arrayBuffer();
        ids.push(requestIdOf(response));
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      }
    };
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const traffic = Promise.all(Array.from({ length: 8 }, (_, worker) => client(worker)));
    await sleep(400);
    const stopped = p.platform.stopUsage();
    await sleep(800);
    await stopped;
    // Listing the ledger while its service is down is a 503, and that reply is recorded too.
    const unavailable = await p.request("/api/usage/events?limit=1", { token });
    expect(unavailable.status).toBe(503);
    ids.push(requestIdOf(unavailable));
    const duringOutage = ids.length;
    await sleep(800);
    await p.platform.restartUsage();
    await sleep(400);
    running = false;
    await traffic;

    expect(ids.length).toBeGreaterThan(duringOutage);
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    await p.waitForRequests(ids, 30_000);
    const stored = await p.storedRequests(ids);
    expect(stored.size).toBe(ids.length);
    for (const [requestId, row] of stored) expect(row.count, requestId).toBe(1);
    const { rows } = await p.platform.pools.usage.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM usage.records WHERE request_id = ANY($1)",
      [ids],
    );
    expect(rows[0]?.n).toBe(ids.length);
  });
});
