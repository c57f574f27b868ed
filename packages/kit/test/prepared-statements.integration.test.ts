import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type pg from "pg";
import { createPool, type Pool } from "../src/db.js";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "../src/pglite.js";
import {
  AUTO_PREPARE_MIN_USES,
  MAX_PREPARED_PER_CONNECTION,
  preparedStatementSupport,
  simpleStatement,
} from "../src/prepared-statements.js";
import { createRealTestDatabase, type TestDatabase } from "../src/testing.js";
import { connected, preparedNames } from "./fixtures/prepared.js";

const text = `SELECT $1::text AS s, $2::int AS n, $3::float8 AS f, $4::boolean AS b,
  $5::timestamptz AS t, $6::text[] AS a, $7::text AS nothing, $8::jsonb AS j, $9 = ANY($10::int[]) AS found`;
const values = [
  `it's a \\ back'slash'', "quoted"; DROP TABLE x; -- ☎ $1`,
  -42,
  0.125,
  false,
  new Date("2026-11-27T12:34:56.789Z"),
  ["a'b", 'c\\d "q"', "", null],
  null,
  JSON.stringify({ k: "v'\\" }),
  7,
  [1, 7],
];

/** Runs `statement` alone in a simple query (after a SELECT 1, as with other statements) and settles it. */
async function run(client: pg.PoolClient, sql: string, settle: (error?: unknown) => void) {
  try {
    const results = (await client.query(`SELECT 1;\n${sql}`)) as unknown as pg.QueryResult[];
    settle();
    return results.at(-1)!.rows;
  } catch (error) {
    settle(error);
    throw error;
  }
}

describe("simpleStatement: a statement of a simple query from the connection's prepared statement", () => {
  const hot = { hot: true };
  let database: TestDatabase;
  let pool: Pool;

  beforeAll(async () => {
    database = await createRealTestDatabase("prepared_statements");
    pool = createPool(database.url, { max: 2 });
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  it("prepares once per connection, then executes, with what the bound statement gives", async () => {
    expect(await preparedStatementSupport(pool)).toBe(true);
    const client = await connected(pool);
    try {
      const bound = await client.query(text, values);
      const first = simpleStatement(client, text, values, hot);
      expect(first.sql).toMatch(
        /^PREPARE sbs_[0-9a-f]{20} AS SELECT[\s\S]*;\nEXECUTE sbs_[0-9a-f]{20}\(/,
      );
      expect(await run(client, first.sql, first.settle)).toEqual(bound.rows);
      const second = simpleStatement(client, text, values, hot);
      expect(second.sql).toMatch(/^EXECUTE sbs_[0-9a-f]{20}\(/);
      expect(await run(client, second.sql, second.settle)).toEqual(bound.rows);
      expect(await preparedNames(client)).toHaveLength(1);
    } finally {
      client.release();
    }
  });

  it("stops preparing a statement on a connection where its query failed, and it still runs", async () => {
    const client = await connected(pool);
    try {
      const failing = `SELECT 1 / $1::int AS q`;
      const first = simpleStatement(client, failing, [0], hot);
      expect(first.sql).toMatch(/^PREPARE /);
      await expect(run(client, first.sql, first.settle)).rejects.toThrow(/division by zero/);
      const again = simpleStatement(client, failing, [2], hot);
      expect(again.sql).toBe("SELECT 1 / '2'::int AS q");
      expect(await run(client, again.sql, again.settle)).toEqual([{ q: 0 }]);
    } finally {
      client.release();
    }
  });

  it("keeps a prepared statement whose execution failed on its values; drops one deallocated", async () => {
    const client = await connected(pool);
    try {
      const divide = `SELECT 10 / $1::int AS q`;
      const first = simpleStatement(client, divide, [5], hot);
      expect(await run(client, first.sql, first.settle)).toEqual([{ q: 2 }]);
      const zero = simpleStatement(client, divide, [0], hot);
      expect(zero.sql).toMatch(/^EXECUTE /);
      await expect(run(client, zero.sql, zero.settle)).rejects.toThrow(/division by zero/);
      const after = simpleStatement(client, divide, [2], hot);
      expect(after.sql).toMatch(/^EXECUTE /);
      expect(await run(client, after.sql, after.settle)).toEqual([{ q: 5 }]);

      await client.query("DEALLOCATE ALL");
      const gone = simpleStatement(client, divide, [2], hot);
      await expect(run(client, gone.sql, gone.settle)).rejects.toMatchObject({ code: "26000" });
      const written = simpleStatement(client, divide, [2], hot);
      expect(written.sql).toBe("SELECT 10 / '2'::int AS q");
      expect(await run(client, written.sql, written.settle)).toEqual([{ q: 5 }]);
    } finally {
      client.release();
    }
  });

  it("prepares no more than its cap on one connection; past it, writes the parameters in", async () => {
    const client = await connected(pool);
    try {
      for (let i = 0; i < MAX_PREPARED_PER_CONNECTION + 2; i += 1) {
        const statement = simpleStatement(client, `SELECT $1::int + ${i} AS n`, [1], hot);
        expect(await run(client, statement.sql, statement.settle)).toEqual([{ n: 1 + i }]);
      }
      const names = await preparedNames(client);
      expect(names.length).toBeLessThanOrEqual(MAX_PREPARED_PER_CONNECTION);
      const past = simpleStatement(client, `SELECT $1::int + 1000 AS n`, [1], hot);
      expect(past.sql).toBe("SELECT '1'::int + 1000 AS n");
    } finally {
      client.release();
    }
  });
});

describe("simpleStatement on PGlite (one session for every connection)", () => {
  let embedded: EmbeddedPostgres;
  let pool: Pool;

  beforeAll(async () => {
    embedded = await startEmbeddedPostgres();
    pool = createPool(embedded.url, { max: 2 });
  });
  afterAll(async () => {
    await pool?.end();
    await embedded?.stop();
  });

  it("writes the parameters in: no connection prepares what another could collide with", async () => {
    expect(await preparedStatementSupport(pool)).toBe(false);
    const a = await connected(pool);
    const b = await connected(pool);
    try {
      for (const client of [a, b, a]) {
        const statement = simpleStatement(client, "SELECT $1::int + 1 AS n", [41]);
        expect(statement.sql).toBe("SELECT '41'::int + 1 AS n");
        expect(await run(client, statement.sql, statement.settle)).toEqual([{ n: 42 }]);
      }
    } finally {
      a.release();
      b.release();
    }
  });

  it("autoPrepare names nothing there either", async () => {
    const client = await connected(pool);
    try {
      for (let i = 0; i < AUTO_PREPARE_MIN_USES + 2; i += 1) {
        expect((await client.query("SELECT $1::int + 1 AS n", [i])).rows).toEqual([{ n: i + 1 }]);
      }
      expect(await preparedNames(client)).toEqual([]);
    } finally {
      client.release();
    }
  });
});
