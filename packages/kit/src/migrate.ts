import { createHash } from "node:crypto";
import { runner } from "node-pg-migrate";
import type pg from "pg";
import { kitTables, type KitTable } from "./kit-tables.js";

/**
 * Applies a service's SQL migrations (node-pg-migrate, `-- Up Migration` files) to the schema
 * it owns, then the kit-owned tables it names (`kitTables`, kit-tables.ts) to the same schema.
 * The migrations table lives in that schema, and the advisory locks are per schema, so services
 * migrate one shared database side by side without waiting on each other.
 */
export async function migrate(
  pool: pg.Pool,
  options: {
    schema: string;
    dir: string;
    /** The kit's tables the service keeps in its schema (outbox, processed_events, signing_keys). */
    kitTables?: readonly KitTable[];
    log?: (message: string) => void;
  },
): Promise<string[]> {
  const client = await pool.connect();
  // A migration may run longer than the pool's deadline for requests (an index on a big table):
  // neither the server's statement_timeout nor the client's read timeout applies to it.
  const parameters = (client as unknown as { connectionParameters: { query_timeout?: number } })
    .connectionParameters;
  const deadline = parameters.query_timeout;
  parameters.query_timeout = 0;
  try {
    await client.query("SET statement_timeout = 0");
    const applied = await runner({
      dbClient: client,
      dir: options.dir,
      direction: "up",
      schema: options.schema,
      createSchema: true,
      migrationsSchema: options.schema,
      createMigrationsSchema: true,
      migrationsTable: "schema_migrations",
      checkOrder: true,
      lockValue: lockValueFor(options.schema),
      log: options.log ?? (() => undefined),
      verbose: false,
    });
    await applyKitTables(client, options.schema, options.kitTables ?? []);
    return applied.map((m) => m.name);
  } finally {
    // node-pg-migrate leaves search_path pointing at the schema; PGlite shares one session.
    await client.query("RESET search_path").catch(() => undefined);
    await client.query("RESET statement_timeout").catch(() => undefined);
    parameters.query_timeout = deadline;
    client.release();
  }
}

function lockValueFor(schema: string, what = "migrate"): number {
  return createHash("sha256").update(`switchboard:${what}:${schema}`).digest().readInt32BE(0);
}

/**
 * The kit's tables in `schema`, under a lock of their own (replicas starting together wait for
 * each other here instead of racing on `CREATE TABLE IF NOT EXISTS`).
 */
async function applyKitTables(
  client: pg.PoolClient,
  schema: string,
  tables: readonly KitTable[],
): Promise<void> {
  if (tables.length === 0) return;
  const lock = lockValueFor(schema, "kit-tables");
  await client.query("SELECT pg_advisory_lock($1)", [lock]);
  try {
    for (const table of tables) await client.query(kitTables[table](schema));
  } finally {
    await client.query("SELECT pg_advisory_unlock($1)", [lock]);
  }
}
