import { createHash } from "node:crypto";
import { runner } from "node-pg-migrate";
import type pg from "pg";

/**
 * Applies a service's SQL migrations (node-pg-migrate, `-- Up Migration` files) to the schema
 * it owns. The migrations table lives in that schema, and the advisory lock is per schema, so
 * services migrate one shared database side by side without waiting on each other.
 */
export async function migrate(
  pool: pg.Pool,
  options: { schema: string; dir: string; log?: (message: string) => void },
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
    return applied.map((m) => m.name);
  } finally {
    // node-pg-migrate leaves search_path pointing at the schema; PGlite shares one session.
    await client.query("RESET search_path").catch(() => undefined);
    await client.query("RESET statement_timeout").catch(() => undefined);
    parameters.query_timeout = deadline;
    client.release();
  }
}

function lockValueFor(schema: string): number {
  return createHash("sha256").update(`switchboard:migrate:${schema}`).digest().readInt32BE(0);
}
