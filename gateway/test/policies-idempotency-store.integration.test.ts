import { createHash, randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "@switchboard/kit";
import {
  createRealTestDatabase,
  testDatabaseKinds,
  type TestDatabase,
} from "@switchboard/kit/testing";
import { migrateGateway } from "../src/auth/index.js";
import { asyncCommitPool } from "../src/policies/traffic-policies.js";
import { IdempotencyStore, type StoredResponse } from "../src/policies/idempotency-store.js";
import { ResponseSealer } from "../src/policies/response-sealing.js";

const fp = (text: string) => createHash("sha256").update(text).digest();
const response: StoredResponse = {
  status: 201,
  mediaType: "application/json",
  body: '{"id":"hld_1"}',
  headers: { Location: "/v1/api/numbers/holds/hld_1" },
};

describe.each(testDatabaseKinds)("idempotency store on $name", ({ create }) => {
  let database: TestDatabase;
  let pool: Pool;
  let store: IdempotencyStore;
  const account = "acct_idem";
  const newKey = () => `key-${randomBytes(6).toString("hex")}`;
  const claimed = async (key: string, print = fp("a")) => {
    const outcome = await store.claim(account, key, print);
    if (outcome.kind !== "claimed") throw new Error(`expected a claim, got ${outcome.kind}`);
    return outcome;
  };
  const age = (key: string, set: string) =>
    pool.query(`UPDATE gateway.idempotency_keys SET ${set} WHERE idempotency_key = $1`, [key]);

  beforeAll(async () => {
    database = await create("idem_store");
    pool = createPool(database.url, { max: 10 });
    await migrateGateway(pool);
    store = new IdempotencyStore(pool, {
      windowSeconds: 86_400,
      leaseSeconds: 30,
      sealer: new ResponseSealer("test-sealing-secret"),
    });
  });

  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it("lets one request claim a key; the others see it in progress", async () => {
    const key = newKey();
    expect(await claimed(key)).toMatchObject({ takeover: false });
    expect(await store.claim(account, key, fp("a"))).toMatchObject({
      kind: "in-progress",
      fingerprint: fp("a"),
    });
    expect(await store.claim(account, key, fp("b"))).toMatchObject({
      kind: "in-progress",
      fingerprint: fp("a"),
    });
    expect((await store.claim("acct_other", key, fp("a"))).kind).toBe("claimed");
  });

  it("says how long the lease of a key in progress has left (when it frees if its holder died)", async () => {
    const key = newKey();
    await claimed(key);
    const fresh = await store.claim(account, key, fp("a"));
    expect(fresh.kind).toBe("in-progress");
    const left = (fresh as { leaseLeftSeconds: number }).leaseLeftSeconds;
    expect(left).toBeGreaterThan(28);
    expect(left).toBeLessThanOrEqual(30);
    await age(key, "lease_expires_at = now() + interval '7 seconds'");
    const aged = (await store.claim(account, key, fp("a"))) as { leaseLeftSeconds: number };
    expect(aged.leaseLeftSeconds).toBeGreaterThan(5);
    expect(aged.leaseLeftSeconds).toBeLessThanOrEqual(7);
  });

  it("replays the completed response and frees a released key", async () => {
    const key = newKey();
    const { leaseId } = await claimed(key);
    expect(await store.complete(account, key, leaseId, response)).toBe(true);
    expect(await store.claim(account, key, fp("a"))).toEqual({
      kind: "completed",
      fingerprint: fp("a"),
      response,
    });

    const freed = newKey();
    const claim = await claimed(freed);
    await store.release(account, freed, claim.leaseId);
    expect((await store.claim(account, freed, fp("a"))).kind).toBe("claimed");
  });

  it("keeps stored bodies sealed at rest: a secret shown once is not in the row", async () => {
    const key = newKey();
    const secret = `whsec_${randomBytes(24).toString("base64")}`;
    const withSecret = { ...response, body: JSON.stringify({ id: "whs_1", secret }) };
    const { leaseId } = await claimed(key);
    expect(await store.complete(account, key, leaseId, withSecret)).toBe(true);
    const { rows } = await pool.query(
      "SELECT response_body FROM gateway.idempotency_keys WHERE idempotency_key = $1",
      [key],
    );
    expect(rows[0].response_body).toMatch(/^v1\./);
    expect(rows[0].response_body).not.toContain(secret);
    expect(await store.claim(account, key, fp("a"))).toMatchObject({ response: withSecret });
    // A sealed body copied onto another key's row does not open.
    const other = newKey();
    const claim = await claimed(other);
    await store.complete(account, other, claim.leaseId, response);
    await pool.query(
      "UPDATE gateway.idempotency_keys SET response_body = $1 WHERE idempotency_key = $2",
      [rows[0].response_body, other],
    );
    await expect(store.claim(account, other, fp("a"))).rejects.toThrow();
  });

  it("keeps several responses in one statement, each only under its own live lease", async () => {
    const [first, second, taken] = [newKey(), newKey(), newKey()];
    const [a, b, dead] = [await claimed(first), await claimed(second), await claimed(taken)];
    await age(taken, "lease_expires_at = now() - interval '1 second'");
    const next = await claimed(taken);
    const other = { ...response, status: 200, body: null };
    expect(
      await store.completeAll([
        { accountId: account, key: first, leaseId: a.leaseId, response },
        { accountId: account, key: taken, leaseId: dead.leaseId, response },
        { accountId: account, key: second, leaseId: b.leaseId, response: other },
        { accountId: account, key: taken, leaseId: next.leaseId, response: other },
      ]),
    ).toEqual([true, false, true, true]);
    expect(await store.claim(account, first, fp("a"))).toMatchObject({ response });
    expect(await store.claim(account, second, fp("a"))).toMatchObject({ response: other });
    expect(await store.claim(account, taken, fp("a"))).toMatchObject({ response: other });
  });

  it("gives a key to exactly one of 50 concurrent claims", async () => {
    const key = newKey();
    const outcomes = await Promise.all(
      Array.from({ length: 50 }, () => store.claim(account, key, fp("a"))),
    );
    expect(outcomes.filter((o) => o.kind === "claimed")).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === "completed")).toHaveLength(0);
  });

  it("lets a retry take over a claim whose lease ran out (its gateway died)", async () => {
    const key = newKey();
    const dead = await claimed(key);
    await age(
      key,
      "lease_expires_at = now() - interval '1 second', created_at = now() - interval '1 minute'",
    );
    expect((await store.claim(account, key, fp("b"))).kind).toBe("in-progress");
    const next = await claimed(key);
    expect(next.takeover).toBe(true);
    expect(await store.complete(account, key, dead.leaseId, response)).toBe(false);
    expect(await store.complete(account, key, next.leaseId, response)).toBe(true);
    const { rows } = await pool.query(
      "SELECT created_at < now() - interval '50 seconds' AS kept_window FROM gateway.idempotency_keys WHERE idempotency_key = $1",
      [key],
    );
    expect(rows[0].kept_window).toBe(true);
  });

  it("without takeOver, leaves a dead row as it is and answers retry", async () => {
    const [lapsed, expired] = [newKey(), newKey()];
    const dead = await claimed(lapsed);
    await age(lapsed, "lease_expires_at = now() - interval '1 second'");
    await store.complete(account, expired, (await claimed(expired)).leaseId, response);
    await age(expired, "expires_at = now() - interval '1 hour'");
    for (const key of [lapsed, expired]) {
      expect(await store.claim(account, key, fp("a"), { takeOver: false })).toEqual({
        kind: "retry",
      });
    }
    const { rows } = await pool.query(
      "SELECT idempotency_key, state, lease_id FROM gateway.idempotency_keys WHERE idempotency_key = ANY($1) ORDER BY state",
      [[lapsed, expired]],
    );
    expect(rows).toEqual([
      { idempotency_key: expired, state: "completed", lease_id: null },
      { idempotency_key: lapsed, state: "in_progress", lease_id: dead.leaseId },
    ]);
  });

  it("renews a live lease so nobody takes it over", async () => {
    const key = newKey();
    const claim = await claimed(key);
    await age(key, "lease_expires_at = now() + interval '1 second'");
    expect(await store.renew(account, key, claim.leaseId)).toBe(true);
    const { rows } = await pool.query(
      "SELECT lease_expires_at > now() + interval '20 seconds' AS renewed FROM gateway.idempotency_keys WHERE idempotency_key = $1",
      [key],
    );
    expect(rows[0].renewed).toBe(true);
    expect(await store.renew(account, key, "00000000-0000-4000-8000-000000000000")).toBe(false);
  });

  it("starts a new window for a key past its window, whatever the body", async () => {
    const key = newKey();
    const { leaseId } = await claimed(key);
    await store.complete(account, key, leaseId, response);
    await age(
      key,
      "created_at = now() - interval '25 hours', expires_at = now() - interval '1 hour'",
    );
    const again = await claimed(key, fp("b"));
    expect(again.takeover).toBe(false);
    expect(await store.claim(account, key, fp("b"))).toMatchObject({
      kind: "in-progress",
      fingerprint: fp("b"),
    });
  });

  it("purges dead keys only", async () => {
    const [done, running, stale, live] = [newKey(), newKey(), newKey(), newKey()];
    await store.complete(account, done, (await claimed(done)).leaseId, response);
    await claimed(running);
    await claimed(stale);
    await store.complete(account, live, (await claimed(live)).leaseId, response);
    await age(done, "expires_at = now() - interval '1 second'");
    await age(running, "expires_at = now() - interval '1 second'");
    await age(
      stale,
      "expires_at = now() - interval '1 second', lease_expires_at = now() - interval '1 second'",
    );
    let purged = 0;
    for (let batch = 1; batch > 0; purged += batch) batch = await store.purge(1);
    expect(purged).toBeGreaterThanOrEqual(2);
    const { rows } = await pool.query<{ idempotency_key: string }>(
      "SELECT idempotency_key FROM gateway.idempotency_keys WHERE idempotency_key = ANY($1)",
      [[done, running, stale, live]],
    );
    expect(rows.map((r) => r.idempotency_key).sort()).toEqual([running, live].sort());
  });
});

describe("idempotency store without synchronous commit", () => {
  it("uses connections whose commits do not wait for the WAL flush", async () => {
    const database = await createRealTestDatabase("idem_async");
    const pool = asyncCommitPool(database.url);
    try {
      const { rows } = await pool.query<{ synchronous_commit: string }>("SHOW synchronous_commit");
      expect(rows[0]?.synchronous_commit).toBe("off");
    } finally {
      await pool.end();
      await database.drop();
    }
  });
});
