import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "../src/db.js";
import { kitTables, type KitTable } from "../src/kit-tables.js";
import { migrate } from "../src/migrate.js";
import { testDatabaseKinds, type TestDatabase } from "../src/testing.js";

/**
 * The copies of kit's tables that five services' first migrations carried (kept verbatim under
 * fixtures/kit-table-copies/<schema>.sql) and the tables of each copy.
 */
const copiesDir = new URL("./fixtures/kit-table-copies/", import.meta.url).pathname;
const copies: { schema: string; tables: KitTable[] }[] = [
  { schema: "call_control", tables: ["signing_keys", "outbox"] },
  { schema: "messaging", tables: ["signing_keys", "outbox"] },
  { schema: "webhook", tables: ["outbox", "processed_events"] },
  { schema: "usage", tables: ["signing_keys", "processed_events"] },
  { schema: "gateway", tables: ["signing_keys"] },
];

/** A schema's tables, columns, constraints and indexes, with the schema's name taken out. */
async function shape(pool: Pool, schema: string) {
  const columns = await pool.query(
    `SELECT table_name, column_name, data_type, is_nullable, column_default
       FROM information_schema.columns WHERE table_schema = $1
      ORDER BY table_name, ordinal_position`,
    [schema],
  );
  const constraints = await pool.query(
    `SELECT t.relname AS table_name, c.conname, c.contype, pg_get_constraintdef(c.oid) AS def
       FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = $1 ORDER BY t.relname, c.contype, def`,
    [schema],
  );
  const indexes = await pool.query<{ tablename: string; indexname: string; indexdef: string }>(
    "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname",
    [schema],
  );
  return {
    columns: columns.rows,
    constraints: constraints.rows,
    indexes: indexes.rows.map((i) => ({
      ...i,
      indexdef: i.indexdef
        .replaceAll(`${schema}.`, "<schema>.")
        .replaceAll(`"${schema}".`, "<schema>."),
    })),
  };
}

/** The kit's tables as a fresh database gets them: `migrate` with no migration of the service's own. */
const kitShape = async (pool: Pool, schema: string, tables: KitTable[], dir: string) => {
  await migrate(pool, { schema, dir, kitTables: tables });
  const { columns, constraints, indexes } = await shape(pool, schema);
  // The migrations table is node-pg-migrate's, not the kit's.
  const ours = (table: string) => table !== "schema_migrations";
  return {
    columns: columns.filter((c) => ours(c.table_name)),
    constraints: constraints.filter((c) => ours(c.table_name)),
    indexes: indexes.filter((i) => ours(i.tablename)),
  };
};

describe.each(testDatabaseKinds)("kit's tables applied by migrate ($name)", ({ name, create }) => {
  let database: TestDatabase;
  let pool: Pool;
  const emptyDir = mkdtempSync(join(tmpdir(), "kit-tables-"));

  beforeAll(async () => {
    database = await create("kit_tables");
    pool = createPool(database.url, { max: 4, name: `kit-tables-${name}` });
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
    rmSync(emptyDir, { recursive: true, force: true });
  });

  it("every copy a service's migration carried is one of the kit's tables", () => {
    expect(readdirSync(copiesDir).sort()).toEqual(copies.map((c) => `${c.schema}.sql`).sort());
    for (const { schema, tables } of copies) {
      const sql = readFileSync(join(copiesDir, `${schema}.sql`), "utf8");
      const created = [...sql.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?"?\w+"?\.(\w+)/g)].map(
        (m) => m[1],
      );
      const expected = tables.flatMap((t) => (t === "outbox" ? [t, "outbox_sequences"] : [t]));
      expect(created.sort(), schema).toEqual(expected.sort());
    }
  });

  it.each(copies)(
    "over the tables $schema's old migration created, migrate changes nothing and fails nothing",
    async ({ schema, tables }) => {
      const fresh = `fresh_${schema}`;
      const fromCopy = await (async () => {
        const old = `old_${schema}`;
        const sql = readFileSync(join(copiesDir, `${schema}.sql`), "utf8")
          .replaceAll(`"${schema}".`, `"${old}".`)
          .replaceAll(`${schema}.`, `${old}.`);
        await pool.query(`CREATE SCHEMA ${old}`);
        await pool.query(sql);
        const before = await shape(pool, old);
        const after = await kitShape(pool, old, tables, emptyDir);
        // Twice: every start applies them again.
        const again = await kitShape(pool, old, tables, emptyDir);
        expect(after).toEqual(again);
        expect(after).toEqual(before);
        return after;
      })();
      const created = await kitShape(pool, fresh, tables, emptyDir);
      expect(created).toEqual(fromCopy);
    },
  );

  it("applies the named tables after the service's own migrations, in its schema", async () => {
    const dir = mkdtempSync(join(tmpdir(), "kit-tables-order-"));
    try {
      writeFileSync(
        join(dir, "1_first.sql"),
        "-- Up Migration\nCREATE TABLE ordered.own (id int PRIMARY KEY);\n-- Down Migration\n",
      );
      const applied = await migrate(pool, {
        schema: "ordered",
        dir,
        kitTables: Object.keys(kitTables) as KitTable[],
      });
      expect(applied).toEqual(["1_first"]);
      const tables = await pool.query<{ tablename: string }>(
        "SELECT tablename FROM pg_tables WHERE schemaname = 'ordered' ORDER BY tablename",
      );
      expect(tables.rows.map((r) => r.tablename)).toEqual([
        "operation_keys",
        "outbox",
        "outbox_sequences",
        "own",
        "processed_events",
        "schema_migrations",
        "signing_keys",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
