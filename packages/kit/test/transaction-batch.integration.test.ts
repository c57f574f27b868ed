import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "../src/db.js";
import { createRealTestDatabase, testDatabaseKinds, type TestDatabase } from "../src/testing.js";
import { batchTransactions } from "../src/transaction-batch.js";

describe.each(testDatabaseKinds)("batchTransactions on $name", ({ create }) => {
  let database: TestDatabase;
  let pool: Pool;

  beforeAll(async () => {
    database = await create("transaction_batch");
    pool = createPool(database.url, { max: 4 });
    await pool.query("CREATE TABLE batched (n int PRIMARY KEY)");
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  const stored = async () =>
    (await pool.query<{ n: number }>("SELECT n FROM batched ORDER BY n")).rows.map((r) => r.n);

  it("commits the work of one linger together; a piece that throws is undone alone", async () => {
    const batched = batchTransactions({ pool, lingerMs: 20 });
    const insert = (n: number) =>
      batched(async (client) => {
        await client.query("INSERT INTO batched (n) VALUES ($1)", [n]);
        return (await client.query<{ tx: string }>("SELECT txid_current()::text AS tx")).rows[0]!
          .tx;
      });
    const outcomes = await Promise.allSettled([
      insert(1),
      insert(2),
      // A duplicate key: a database error, rolled back to its savepoint.
      insert(1),
      batched(async (client) => {
        await client.query("INSERT INTO batched (n) VALUES (3)");
        throw new Error("refused");
      }),
      insert(4),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual([
      "fulfilled",
      "fulfilled",
      "rejected",
      "rejected",
      "fulfilled",
    ]);
    const transactions = outcomes.flatMap((o) => (o.status === "fulfilled" ? [o.value] : []));
    expect(new Set(transactions).size).toBe(1);
    expect(await stored()).toEqual([1, 2, 4]);
  });

  it("answers only after the commit", async () => {
    const batched = batchTransactions({ pool, lingerMs: 1 });
    await batched((client) => client.query("INSERT INTO batched (n) VALUES (10)"));
    const other = await pool.query("SELECT 1 FROM batched WHERE n = 10");
    expect(other.rowCount).toBe(1);
  });
});

// PGlite serves one transaction at a time: batches side by side need a PostgreSQL server.
describe("batchTransactions on postgres", () => {
  let database: TestDatabase;
  let pool: Pool;

  beforeAll(async () => {
    database = await createRealTestDatabase("transaction_batches");
    pool = createPool(database.url, { max: 4 });
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it("runs one batch at a time unless told to run more side by side", async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const order: string[] = [];
    const run = async (concurrency: number) => {
      const batched = batchTransactions({ pool, lingerMs: 1, concurrency });
      const slow = batched(async () => {
        await held;
        order.push(`slow ${concurrency}`);
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const quick = batched(async () => {
        order.push(`quick ${concurrency}`);
      });
      return { slow, quick };
    };
    const side = await run(2);
    await side.quick;
    const single = await run(1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    release();
    await Promise.all([side.slow, single.slow, single.quick]);
    expect(order).toEqual(["quick 2", "slow 2", "slow 1", "quick 1"]);
  });
});
