import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  startTestPlatform,
  type DatabaseKind,
  type TestPlatform,
} from "@switchboard/test-support/platform";

/**
 * Idempotency-Key through the whole gateway to the inventory service: on PostgreSQL with Redis
 * (mesh) and on PGlite with the in-process bucket store (embedded mode).
 */
describe.each([
  { name: "PostgreSQL and Redis", database: "postgres" as DatabaseKind, redis: true },
  { name: "PGlite and the in-process store", database: "pglite" as DatabaseKind, redis: false },
])("Idempotency-Key on $name", ({ database, redis }) => {
  let platform: TestPlatform;
  let token: string;
  let numbers: string[];
  const newKey = (label: string) => `${label}-${randomBytes(6).toString("hex")}`;

  const hold = (number: string, key?: string) =>
    platform.request("/v1/api/numbers/hold", {
      method: "POST",
      token,
      json: { number },
      headers: key === undefined ? {} : { "Idempotency-Key": key },
    });

  /** Holds of the number in the inventory's own table: what actually executed. */
  const holdsOf = async (number: string) => {
    const { rows } = await platform.inventoryPool.query<{ idempotency_key: string | null }>(
      "SELECT idempotency_key FROM inventory.holds WHERE e164 = $1",
      [number],
    );
    return rows;
  };

  const keyRow = async (key: string) => {
    const { rows } = await platform.gateway.pool.query<{ state: string; fresh: boolean }>(
      `SELECT state, created_at > now() - interval '1 minute' AS fresh
         FROM gateway.idempotency_keys WHERE account_id = $1 AND idempotency_key = $2`,
      [platform.accountId, key],
    );
    return rows[0];
  };

  beforeAll(async () => {
    platform = await startTestPlatform({ database, redis, seed: 300 });
    token = await platform.token();
    const page = await platform.request("/v1/api/numbers/search?limit=20", { token });
    numbers = ((await page.json()) as { data: { number: string }[] }).data.map((n) => n.number);
  });
  afterAll(async () => platform?.stop());

  it("executes 50 concurrent POSTs with one key and body once, and answers all 50 alike", async () => {
    const number = numbers[0]!;
    const key = newKey("concurrent");
    const responses = await Promise.all(Array.from({ length: 50 }, () => hold(number, key)));
    const bodies = await Promise.all(responses.map((r) => r.text()));

    expect(await holdsOf(number)).toEqual([{ idempotency_key: key }]);
    expect(new Set(responses.map((r) => r.status))).toEqual(new Set([201]));
    expect(new Set(bodies).size).toBe(1);
    expect(new Set(responses.map((r) => r.headers.get("location"))).size).toBe(1);
    const replayed = responses.filter((r) => r.headers.get("idempotent-replayed") === "true");
    expect(replayed).toHaveLength(49);
    expect(platform.gateway.policies.counters.idempotentReplays).toBeGreaterThanOrEqual(49);
    expect((await keyRow(key))?.state).toBe("completed");
  });

  it("answers a reused key with another body 409 idempotency-mismatch", async () => {
    const key = newKey("mismatch");
    expect((await hold(numbers[1]!, key)).status).toBe(201);
    const response = await hold(numbers[2]!, key);
    expect(response.status).toBe(409);
    expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
    const problem = (await response.json()) as Record<string, unknown>;
    expect(problem.type).toMatch(/\/idempotency-mismatch$/);
    expect(problem.title).toBe("Idempotency-Key was reused with a different request body");
    expect(problem.status).toBe(409);
    expect(problem.code).toBe("IDEMPOTENCY_MISMATCH");
    expect(await holdsOf(numbers[2]!)).toEqual([]);
  });

  it("runs a request again once its key is older than the 24-hour window", async () => {
    const number = numbers[3]!;
    const key = newKey("window");
    const first = await hold(number, key);
    expect(first.status).toBe(201);
    expect((await hold(number, key)).headers.get("idempotent-replayed")).toBe("true");

    await platform.gateway.pool.query(
      `UPDATE gateway.idempotency_keys
          SET created_at = now() - interval '25 hours', expires_at = now() - interval '1 hour'
        WHERE account_id = $1 AND idempotency_key = $2`,
      [platform.accountId, key],
    );
    const again = await hold(number, key);
    expect(again.headers.get("idempotent-replayed")).toBeNull();
    expect((await keyRow(key))?.fresh).toBe(true);
    // The owning service still holds one resource per key: the same hold comes back.
    expect(again.status).toBe(201);
    expect(((await again.json()) as { id: string }).id).toBe(
      ((await first.json()) as { id: string }).id,
    );
    expect(await holdsOf(number)).toHaveLength(1);
  });

  it("refuses a malformed key with 400 invalid-idempotency-key and holds nothing", async () => {
    const response = await hold(numbers[4]!, "two words");
    expect(response.status).toBe(400);
    expect(((await response.json()) as { type: string }).type).toMatch(
      /\/invalid-idempotency-key$/,
    );
    expect(await holdsOf(numbers[4]!)).toEqual([]);
  });

  it("does not keep a 5xx: with the backend back, the retry executes", async () => {
    const number = numbers[5]!;
    const key = newKey("outage");
    await platform.stopInventory();
    const failed = await hold(number, key);
    expect(failed.status).toBe(503);
    expect(failed.headers.get("retry-after")).not.toBeNull();
    // The key is freed (after the reply has gone out).
    await vi.waitFor(async () => expect(await keyRow(key)).toBeUndefined());

    await platform.restartInventory();
    let retry = await hold(number, key);
    for (let attempt = 0; retry.status === 503 && attempt < 60; attempt += 1) {
      await sleep(250);
      retry = await hold(number, key);
    }
    expect(retry.status).toBe(201);
    expect(retry.headers.get("idempotent-replayed")).toBeNull();
    expect(await holdsOf(number)).toEqual([{ idempotency_key: key }]);
    expect((await hold(number, key)).headers.get("idempotent-replayed")).toBe("true");
  });
});
