import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "../src/db.js";
import { testDatabaseKinds, type TestDatabase } from "../src/testing.js";
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
