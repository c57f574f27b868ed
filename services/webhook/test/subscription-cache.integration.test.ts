import { createLogger, createPool, type Pool } from "@switchboard/kit";
import { createRealTestDatabase, type TestDatabase } from "@switchboard/kit/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { migrateWebhook } from "../src/migrations.js";
import { startSubscriptionCache } from "../src/subscription-cache.js";

/** Fan-out's memory of each account's active subscriptions, on real PostgreSQL (LISTEN). */
describe("the subscription cache", () => {
  let database: TestDatabase;
  let pool: Pool;
  let writer: Pool;
  let cache: ReturnType<typeof startSubscriptionCache>;
  let reads: ReturnType<typeof vi.spyOn>;

  const insert = (id: string, accountId: string, events = ["message.*"]) =>
    writer.query(
      `INSERT INTO webhook.subscriptions (id, account_id, url, events, status)
       VALUES ($1, $2, 'https://hooks.example.test/a', $3, 'active')`,
      [id, accountId, events],
    );
  const ids = async (accountId: string) => (await cache.read(accountId)).map((s) => s.id);
  /** Waits until the account is remembered (a read overtaken by a notification is not). */
  const remembered = (accountId: string) =>
    vi.waitFor(async () => {
      await cache.read(accountId);
      const before = reads.mock.calls.length;
      await cache.read(accountId);
      expect(reads.mock.calls.length).toBe(before);
    });

  let syncs = 0;
  /**
   * Returns once the notifications of every commit before it have reached the cache: they
   * arrive in commit order, so once a later commit's has forgotten a remembered account, the
   * earlier ones are in (a late one would otherwise forget an account after it was remembered).
   */
  const settled = async () => {
    syncs += 1;
    const account = `acct_sync_${syncs}`;
    await remembered(account);
    await insert(`whs_sync_${syncs}`, account);
    await vi.waitFor(async () => expect(await ids(account)).toEqual([`whs_sync_${syncs}`]));
  };

  beforeAll(async () => {
    database = await createRealTestDatabase("webhook_subscription_cache");
    pool = createPool(database.url, { max: 4 });
    writer = createPool(database.url, { max: 2 });
    await migrateWebhook(pool);
    reads = vi.spyOn(pool, "query");
    cache = startSubscriptionCache({ pool, logger: createLogger("test", { level: "silent" }) });
    // Remembered only once LISTEN took effect: until then every read goes to the table.
    await remembered("acct_probe");
  });
  afterAll(async () => {
    await cache?.stop();
    await pool?.end();
    await writer?.end();
    await database?.drop();
  });

  it("reads an account once, then answers from memory", async () => {
    await insert("whs_a1", "acct_a");
    await settled();
    await remembered("acct_a");
    const before = reads.mock.calls.length;
    expect(await ids("acct_a")).toEqual(["whs_a1"]);
    expect(reads.mock.calls.length).toBe(before);
  });

  it("sees a subscription created, changed or paused elsewhere once its commit is notified", async () => {
    await insert("whs_b1", "acct_b");
    await settled();
    await remembered("acct_b");
    expect(await ids("acct_b")).toEqual(["whs_b1"]);
    await insert("whs_b2", "acct_b", ["call.*"]);
    await vi.waitFor(async () => expect(await ids("acct_b")).toEqual(["whs_b1", "whs_b2"]));
    await writer.query(`UPDATE webhook.subscriptions SET events = '{*}' WHERE id = 'whs_b2'`);
    await vi.waitFor(async () =>
      expect((await cache.read("acct_b")).find((s) => s.id === "whs_b2")?.events).toEqual(["*"]),
    );
    await writer.query(`UPDATE webhook.subscriptions SET status = 'paused' WHERE id = 'whs_b1'`);
    await vi.waitFor(async () => expect(await ids("acct_b")).toEqual(["whs_b2"]));
  });

  it("forgets only the account that changed", async () => {
    await insert("whs_c1", "acct_c");
    await insert("whs_d1", "acct_d");
    await settled();
    await remembered("acct_c");
    await remembered("acct_d");
    await insert("whs_c2", "acct_c");
    await vi.waitFor(async () => expect(await ids("acct_c")).toEqual(["whs_c1", "whs_c2"]));
    const before = reads.mock.calls.length;
    expect(await ids("acct_d")).toEqual(["whs_d1"]);
    expect(reads.mock.calls.length).toBe(before);
  });
});
