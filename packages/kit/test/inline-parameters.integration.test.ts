import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "../src/db.js";
import { inlinable, inlineParameters } from "../src/sql-literals.js";
import { createRealTestDatabase, type TestDatabase } from "../src/testing.js";

describe("inlineParameters on real PostgreSQL", () => {
  let database: TestDatabase;
  let pool: Pool;

  beforeAll(async () => {
    database = await createRealTestDatabase("inline_parameters");
    pool = createPool(database.url, { max: 2 });
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });

  const text = `SELECT $1::text AS s, $2::int AS n, $3::float8 AS f, $4::boolean AS b,
    $5::timestamptz AS t, $6::text[] AS a, $7::text AS nothing, $8::jsonb AS j, $9::text AS nine, $10::text AS ten`;
  const values = [
    `it's a \\ back'slash'', "quoted"; DROP TABLE x; -- ☎ $1`,
    -42,
    0.125,
    false,
    new Date("2026-11-27T12:34:56.789Z"),
    ["a'b", "c\\d", ""],
    null,
    JSON.stringify({ k: "v'\\" }),
    "nine",
    "ten",
  ];

  it("gives what the same statement with parameters gives, in one simple query with others", async () => {
    const bound = await pool.query(text, values);
    const inlined = (await pool.query(
      `SELECT 1; ${inlineParameters(text, values)}`,
    )) as unknown as {
      rows: unknown[];
    }[];
    expect(inlined.at(-1)!.rows).toEqual(bound.rows);
  });

  it("refuses what it cannot write in, and a missing parameter", () => {
    expect(inlinable(values)).toBe(true);
    expect(inlinable([Buffer.from("x")])).toBe(false);
    expect(inlinable([{ a: 1 }])).toBe(false);
    expect(() => inlineParameters("SELECT $1", [Buffer.from("x")])).toThrow();
    expect(() => inlineParameters("SELECT $2", ["x"])).toThrow(/no value for \$2/);
  });
});
