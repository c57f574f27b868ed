import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type pg from "pg";
import { plannedEachTime } from "../src/auto-prepare.js";
import { createPool, type Pool } from "../src/db.js";
import {
  AUTO_PREPARE_MIN_USES,
  MAX_AUTO_PREPARED_PER_CONNECTION,
  preparedStatementSupport,
  simpleStatement,
} from "../src/prepared-statements.js";
import { createRealTestDatabase, type TestDatabase } from "../src/testing.js";
import { connected, preparedNames } from "./fixtures/prepared.js";

const sum = "SELECT $1::int + $2::int AS n, $3::text[] AS a";

describe("autoPrepare: what a pool sends often, each connection prepares once", () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createRealTestDatabase("auto_prepare");
  });
  afterAll(async () => {
    await database?.drop();
  });

  /** A pool of `max` connections (one by default), for the test's time. */
  async function withPool(work: (pool: Pool) => Promise<void>, max = 1): Promise<void> {
    const pool = createPool(database.url, { max });
    try {
      await work(pool);
    } finally {
      await pool.end();
    }
  }

  /** A client of a pool (of `max` connections) that has learned what its server is. */
  async function withClient(
    work: (client: pg.PoolClient, pool: Pool) => Promise<void>,
    max = 1,
  ): Promise<void> {
    await withPool(async (pool) => {
      const client = await connected(pool);
      try {
        await work(client, pool);
      } finally {
        client.release();
      }
    }, max);
  }

  it("sends a statement unnamed until the pool has sent it often, then from one prepared statement", async () => {
    await withClient(async (client) => {
      for (let i = 1; i < AUTO_PREPARE_MIN_USES; i += 1) {
        const { rows } = await client.query(sum, [i, 1, ["x", null]]);
        expect(rows).toEqual([{ n: i + 1, a: ["x", null] }]);
      }
      expect(await preparedNames(client)).toEqual([]);
      for (let i = 0; i < 3; i += 1) {
        const { rows } = await client.query(sum, [i, 2, ["y'"]]);
        expect(rows).toEqual([{ n: i + 2, a: ["y'"] }]);
      }
      expect(await preparedNames(client)).toEqual([expect.stringMatching(/^sba_[0-9a-f]{20}$/)]);
    });
  });

  it("answers as the unnamed statement in every form: text and values, a config, a callback", async () => {
    await withPool(async (pool) => {
      await preparedStatementSupport(pool);
      const answers: unknown[] = [];
      for (let i = 0; i < AUTO_PREPARE_MIN_USES + 2; i += 1) {
        answers.push((await pool.query(sum, [i, 0, []])).rows);
        answers.push((await pool.query({ text: sum, values: [i, 0, []] })).rows);
        answers.push((await pool.query({ text: sum }, [i, 0, []])).rows);
        const client = await pool.connect();
        try {
          answers.push(
            await new Promise((resolve, reject) =>
              client.query(sum, [i, 0, []], (error, result) =>
                error ? reject(error) : resolve(result.rows),
              ),
            ),
          );
        } finally {
          client.release();
        }
      }
      const expected = Array.from({ length: AUTO_PREPARE_MIN_USES + 2 }, (_, i) =>
        Array.from({ length: 4 }, () => [{ n: i, a: [] }]),
      ).flat();
      expect(answers).toEqual(expected);
      const client = await pool.connect();
      try {
        expect(await preparedNames(client)).toHaveLength(1);
      } finally {
        client.release();
      }
    });
  });

  it("never names a statement without parameters, one already named, or one plannedEachTime", async () => {
    await withClient(async (client) => {
      for (let i = 0; i < AUTO_PREPARE_MIN_USES + 2; i += 1) {
        await client.query("SELECT 1 AS one");
        await client.query({ name: "mine", text: "SELECT $1::int AS n", values: [i] });
        await client.query(plannedEachTime("SELECT $1::int * 2 AS n", [i]));
      }
      expect(await preparedNames(client)).toEqual(["mine"]);
    });
  });

  it("prepares no more than its cap on one connection; past it, sends statements unnamed", async () => {
    await withClient(async (client) => {
      for (let i = 0; i < MAX_AUTO_PREPARED_PER_CONNECTION + 3; i += 1) {
        for (let use = 0; use < AUTO_PREPARE_MIN_USES; use += 1) {
          const { rows } = await client.query(`SELECT $1::int + ${i} AS n`, [use]);
          expect(rows).toEqual([{ n: use + i }]);
        }
      }
      expect(await preparedNames(client)).toHaveLength(MAX_AUTO_PREPARED_PER_CONNECTION);
    });
  });

  it("fails once where a statement was deallocated, then sends it unnamed on that connection", async () => {
    await withClient(async (client) => {
      for (let i = 0; i < AUTO_PREPARE_MIN_USES; i += 1) await client.query(sum, [i, 1, []]);
      expect(await preparedNames(client)).toHaveLength(1);
      await client.query("DEALLOCATE ALL");
      await expect(client.query(sum, [1, 1, []])).rejects.toMatchObject({ code: "26000" });
      for (let i = 0; i < 3; i += 1) {
        expect((await client.query(sum, [i, 1, []])).rows).toEqual([{ n: i + 1, a: [] }]);
      }
      expect(await preparedNames(client)).toEqual([]);
    });
  });

  /** Sends `text` with `values` as simpleStatement makes it, in a simple query; its rows and how it went. */
  async function sendSimple(client: pg.PoolClient, text: string, values: unknown[]) {
    const statement = simpleStatement(client, text, values);
    const results = (await client.query(
      `SELECT 1;\n${statement.sql}`,
    )) as unknown as pg.QueryResult[];
    statement.settle();
    return { rows: results.at(-1)!.rows, sent: statement.sql.split(" ")[0]! };
  }

  it("prepares a simple query's statement (simpleStatement) once the pool has sent it often and PostgreSQL can PREPARE it", async () => {
    await withClient(async (client) => {
      const sent: string[] = [];
      for (let i = 0; i < 40 && !sent.includes("EXECUTE"); i += 1) {
        const result = await sendSimple(client, "SELECT $1::int + 1 AS n", [i]);
        expect(result.rows).toEqual([{ n: i + 1 }]);
        sent.push(result.sent);
        // The PREPARE asked on its own goes on the pool's other connection.
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const firstPrepare = sent.indexOf("PREPARE");
      expect(firstPrepare).toBeGreaterThanOrEqual(AUTO_PREPARE_MIN_USES);
      expect(sent.slice(0, firstPrepare).every((s) => s === "SELECT")).toBe(true);
      expect(sent.slice(firstPrepare)).toEqual(["PREPARE", "EXECUTE"]);
    }, 2);
  });

  it("never prepares a statement PostgreSQL cannot PREPARE, and it never fails for that", async () => {
    await withClient(async (client) => {
      for (let i = 0; i < AUTO_PREPARE_MIN_USES * 4; i += 1) {
        const value = i % 2 === 0 ? null : `v${i}`;
        const result = await sendSimple(client, "SELECT $1 IS NULL AS missing", [value]);
        expect(result).toEqual({ rows: [{ missing: value === null }], sent: "SELECT" });
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      expect(await preparedNames(client)).toEqual([]);
    }, 2);
  });

  it("prepares a text once in a simple query that carries it twice; a statement abandoned prepares nothing", async () => {
    await withClient(async (client) => {
      const text = "SELECT $1::int * 3 AS n";
      const abandoned = simpleStatement(client, text, [1], { hot: true });
      expect(abandoned.sql).toMatch(/^PREPARE /);
      abandoned.abandon();
      const first = simpleStatement(client, text, [1], { hot: true });
      const second = simpleStatement(client, text, [2], { hot: true });
      expect(first.sql).toMatch(/^PREPARE /);
      expect(second.sql).toMatch(/^EXECUTE /);
      const results = (await client.query(
        `${first.sql};\n${second.sql}`,
      )) as unknown as pg.QueryResult[];
      first.settle();
      second.settle();
      expect(results.map((r) => r.rows).filter((rows) => rows.length > 0)).toEqual([
        [{ n: 3 }],
        [{ n: 6 }],
      ]);
      expect(simpleStatement(client, text, [3], { hot: true }).sql).toMatch(/^EXECUTE /);
    });
  });
});
