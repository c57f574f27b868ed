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

  it("undoes alone a piece that caught its statement's failure and went on, wherever it stands", async () => {
    const batched = batchTransactions({ pool, lingerMs: 20 });
    const insert = (n: number) =>
      batched((client) => client.query("INSERT INTO batched (n) VALUES ($1)", [n]));
    // A duplicate key caught: the piece returns, leaving the transaction failed.
    const swallowing = (n: number) =>
      batched(async (client) => {
        await client.query("INSERT INTO batched (n) VALUES ($1)", [n]).catch(() => undefined);
      });
    const outcomes = await Promise.allSettled([
      insert(20),
      swallowing(20),
      insert(21),
      swallowing(21),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual([
      "fulfilled",
      "rejected",
      "fulfilled",
      "rejected",
    ]);
    expect(await stored()).toContain(21);
    expect((await stored()).filter((n) => n === 20 || n === 21)).toEqual([20, 21]);
  });

  it("fails a lone piece that caught its statement's failure, and commits nothing of it", async () => {
    const batched = batchTransactions({ pool, lingerMs: 1 });
    await expect(
      batched(async (client) => {
        await client.query("INSERT INTO batched (n) VALUES (30)");
        await client.query("INSERT INTO batched (n) VALUES (30)").catch(() => undefined);
      }),
    ).rejects.toThrow(/rolled back/);
    expect(await stored()).not.toContain(30);
  });

  it("keeps a savepoint, or a piece's undo, for the next piece when a piece sends nothing", async () => {
    const batched = batchTransactions({ pool, lingerMs: 20 });
    const insert = (n: number) =>
      batched((client) => client.query("INSERT INTO batched (n) VALUES ($1)", [n]));
    const outcomes = await Promise.allSettled([
      batched(() => Promise.reject(new Error("refused before any statement"))),
      insert(40),
      insert(40),
      batched(() => Promise.resolve("nothing to write")),
      batched(() => Promise.reject(new Error("refused before any statement"))),
      insert(41),
      insert(41),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual([
      "rejected",
      "fulfilled",
      "rejected",
      "fulfilled",
      "rejected",
      "fulfilled",
      "rejected",
    ]);
    expect((await stored()).filter((n) => n === 40 || n === 41)).toEqual([40, 41]);
  });

  it("answers a piece's first query with its own results, whatever it holds", async () => {
    const batched = batchTransactions({ pool, lingerMs: 20 });
    const [several, bytes] = await Promise.all([
      batched(async (client) => {
        const results = (await client.query(
          "INSERT INTO batched (n) VALUES (50); SELECT 51 AS n",
        )) as unknown as { command: string; rows: { n: number }[] }[];
        return results.map((r) => r.command);
      }),
      batched(async (client) => {
        const { rows } = await client.query<{ length: number }>(
          "SELECT length($1::bytea) AS length",
          [Buffer.from([1, 2, 3])],
        );
        return rows[0]!.length;
      }),
    ]);
    expect(several).toEqual(["INSERT", "SELECT"]);
    expect(bytes).toBe(3);
    expect(await stored()).toContain(50);
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

  it("sends each piece's first statement with the BEGIN or savepoint before it, and the COMMIT alone", async () => {
    const counted = createPool(database.url, { max: 1 });
    const sent: string[] = [];
    counted.on("acquire", (client) => {
      if ((client as { counted?: true }).counted) return;
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      Object.assign(client, {
        counted: true,
        query: (...args: unknown[]) => {
          const first = args[0];
          sent.push(typeof first === "string" ? first : (first as { text: string }).text);
          return query(...args);
        },
      });
    });
    try {
      await counted.query("CREATE TABLE IF NOT EXISTS counted (n int PRIMARY KEY)");
      const batched = batchTransactions({ pool: counted, lingerMs: 20 });
      const insert = (n: number) =>
        batched((client) => client.query("INSERT INTO counted (n) VALUES ($1)", [n]));
      sent.length = 0;
      await Promise.all([insert(1), insert(2), insert(3)]);
      expect(sent).toEqual([
        "BEGIN; SAVEPOINT batched;\nINSERT INTO counted (n) VALUES ('1')",
        "RELEASE SAVEPOINT batched; SAVEPOINT batched;\nINSERT INTO counted (n) VALUES ('2')",
        "RELEASE SAVEPOINT batched; SAVEPOINT batched;\nINSERT INTO counted (n) VALUES ('3')",
        "COMMIT",
      ]);
      sent.length = 0;
      await insert(4);
      expect(sent).toEqual(["BEGIN;\nINSERT INTO counted (n) VALUES ('4')", "COMMIT"]);
      expect(
        (await counted.query<{ n: number }>("SELECT n FROM counted ORDER BY n")).rows.map(
          (r) => r.n,
        ),
      ).toEqual([1, 2, 3, 4]);
    } finally {
      await counted.end();
    }
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
