import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "@switchboard/kit";
import { createRealTestDatabase, type TestDatabase } from "@switchboard/kit/testing";
import { migrateGateway } from "../src/auth/index.js";
import { createAccount, createClient } from "../src/admin/index.js";
import { clientStatusReader } from "../src/auth/authenticator.js";
import { ClientStatusCache } from "../src/auth/client-status-cache.js";

const eventually = async (check: () => Promise<boolean> | boolean, what: string) => {
  const deadline = Date.now() + 5_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

/**
 * The client status a gateway remembers (real PostgreSQL, LISTEN/NOTIFY): kept while every
 * change is notified, forgotten at a change's commit, not kept at all while the LISTEN
 * connection is lost, and kept again once it is back.
 */
describe("ClientStatusCache on PostgreSQL", () => {
  let database: TestDatabase;
  let pool: Pool;
  let reads = 0;
  let cache: ClientStatusCache;
  let listening: { stop(): Promise<void> };
  let clientId: string;

  beforeAll(async () => {
    database = await createRealTestDatabase("client_status");
    pool = createPool(database.url, { max: 4 });
    await migrateGateway(pool);
    const account = await createAccount(pool, { name: "cached" });
    clientId = (await createClient(pool, { accountId: account.id, scopes: ["numbers:read"] }))
      .clientId;
    const read = clientStatusReader(pool);
    cache = new ClientStatusCache(async (id) => {
      reads += 1;
      return read(id);
    });
    listening = cache.listen(pool);
    await eventually(
      async () =>
        (
          await pool.query(
            // This database's only: other suites' gateways listen on the same server.
            `SELECT 1 FROM pg_stat_activity WHERE datname = current_database()
                AND query LIKE 'LISTEN "gateway_client_status"%'`,
          )
        ).rowCount === 1,
      "the LISTEN",
    );
  });
  afterAll(async () => {
    await listening?.stop();
    await pool?.end();
    await database?.drop();
  });

  const readsFor = async (times: number) => {
    const before = reads;
    for (let i = 0; i < times; i += 1) await cache.status(clientId);
    return reads - before;
  };

  it("reads a client once while listening", async () => {
    expect(await readsFor(5)).toBeLessThanOrEqual(1);
    expect(await cache.status(clientId)).toMatchObject({ active: true });
  });

  it("forgets a client at the commit that changes it", async () => {
    await pool.query("UPDATE gateway.clients SET disabled_at = now() WHERE client_id = $1", [
      clientId,
    ]);
    await eventually(async () => (await cache.status(clientId))?.active === false, "the change");
    await pool.query("UPDATE gateway.clients SET disabled_at = NULL WHERE client_id = $1", [
      clientId,
    ]);
    await eventually(async () => (await cache.status(clientId))?.active === true, "the change");
  });

  it("reads on every check while the LISTEN connection is lost, and remembers again once it is back", async () => {
    await pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE query LIKE 'LISTEN "gateway_client_status"%' AND pid <> pg_backend_pid()`,
    );
    await eventually(async () => (await readsFor(2)) === 2, "reading on every check");
    // Reconnected (1 s later): remembered again.
    await eventually(async () => (await readsFor(3)) <= 1, "remembering again");
  });
});
