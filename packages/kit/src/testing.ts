import { randomBytes } from "node:crypto";
import pg from "pg";
import { startEmbeddedPostgres } from "./pglite.js";

/**
 * Test databases. `real` is a fresh PostgreSQL database per call on the server named by
 * TEST_DATABASE_URL (default: the local server); `pglite` is an in-memory PGlite served on a
 * socket. In CI (CI=true) a missing PostgreSQL server is a failure, never a skip.
 */
export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

export const testServerUrl = (): string =>
  process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export async function createRealTestDatabase(label = "t"): Promise<TestDatabase> {
  const name = `sb_${label.replace(/[^a-z0-9]/gi, "_").toLowerCase()}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: testServerUrl() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(testServerUrl());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: testServerUrl() });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

export async function createPgliteTestDatabase(): Promise<TestDatabase> {
  const server = await startEmbeddedPostgres({});
  return { url: server.url, drop: () => server.stop() };
}

/** Both database kinds, for suites that must pass on each. */
export const testDatabaseKinds = [
  { name: "postgres", create: createRealTestDatabase },
  { name: "pglite", create: () => createPgliteTestDatabase() },
] as const;
