import pg from "pg";
import { outboxWritesCommitted, outboxWritesRolledBack } from "./events/outbox-signal.js";
import { trackPool } from "./metrics/pools.js";
import { isDependencyUnavailable } from "./dependency-failure.js";
import { autoPrepare } from "./auto-prepare.js";
import { simpleStatement, watchPreparedStatements } from "./prepared-statements.js";
import { inlinable } from "./sql-literals.js";

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
export type Queryable = Pick<pg.Pool, "query">;

// int8 and numeric come back as strings by default; counts and sizes here fit in a double.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

export interface PoolOptions {
  max?: number;
  name?: string;
  /**
   * Every statement's deadline (docs/architecture.md rule 4: one inside the request's): the
   * server cancels a statement past it (SQLSTATE 57014, answered 504), and the client gives up
   * on one whose server stopped answering (paused, cut off) 500 ms later (answered 503).
   * Waiting for a connection is bounded by it too. Unset: no deadline (tools, migrations).
   */
  statementTimeoutMs?: number;
}

/** How much longer than the server's deadline the client waits for a statement's answer. */
const CLIENT_GRACE_MS = 500;

export function createPool(url: string, options: PoolOptions = {}): pg.Pool {
  const deadline = options.statementTimeoutMs;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.max ?? 10,
    // Idle connections beyond two close after 30 s; two stay open, so the first request after
    // a quiet spell does not wait for a new connection (docs/benchmarks.md, the platform at rest).
    min: Math.min(2, options.max ?? 10),
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: deadline ?? 5_000,
    application_name: options.name ?? "switchboard",
    ...(deadline ? { statement_timeout: deadline, query_timeout: deadline + CLIENT_GRACE_MS } : {}),
  });
  return supervisePool(pool, options.name ?? "switchboard");
}

/**
 * What every pool of the platform needs: a connection lost while idle in the pool, or while
 * checked out between queries (PostgreSQL restarting, a network cut), must not crash the
 * process — the next query fails instead and the pool replaces the client. Also reports the
 * pool's connections under `name` (`db_pool_connections`, `db_pool_max`), learns whether its
 * server keeps prepared statements (simpleStatement), and prepares what it sends often
 * (autoPrepare).
 */
export function supervisePool(pool: pg.Pool, name: string): pg.Pool {
  pool.on("error", () => undefined);
  pool.on("connect", (client) => client.on("error", () => undefined));
  watchPreparedStatements(pool);
  autoPrepare(pool);
  trackPool(pool, name);
  return pool;
}

/**
 * Runs `work` in one transaction; rolls back on any error and rethrows it. Work that caught a
 * failed statement's error and went on left the transaction failed: PostgreSQL answers its
 * COMMIT with a ROLLBACK, and this throws rather than report the work done.
 */
export async function withTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await work(client);
    const commit = await client.query("COMMIT");
    if (commit.command === "ROLLBACK") {
      throw new Error("the transaction was rolled back: a statement in it failed");
    }
    outboxWritesCommitted(client);
    client.release();
    return result;
  } catch (error) {
    outboxWritesRolledBack(client);
    await client.query("ROLLBACK").catch(() => undefined);
    // A connection that failed (lost, or a statement past its deadline) is not reused.
    client.release(isDependencyUnavailable(error) ? (error as Error) : undefined);
    throw error;
  }
}

/** True when the database answers a trivial query within `timeoutMs`. */
export async function isDatabaseReady(pool: pg.Pool, timeoutMs = 1_000): Promise<boolean> {
  const probe = pool.query("SELECT 1").then(
    () => true,
    () => false,
  );
  const timeout = new Promise<boolean>((resolve) =>
    setTimeout(() => resolve(false), timeoutMs).unref(),
  );
  return Promise.race([probe, timeout]);
}

/**
 * `BEGIN` and the transaction's first statement in one round trip (a simple query: the
 * statement from the connection's prepared statement, or its parameters written in, by
 * simpleStatement); its result. Values that cannot be written in go in a round trip of their
 * own after the BEGIN. For statements of a fixed text.
 */
export async function beginWith<R extends pg.QueryResultRow>(
  client: pg.ClientBase,
  text: string,
  values: readonly unknown[] = [],
): Promise<pg.QueryResult<R>> {
  if (!inlinable(values)) {
    await client.query("BEGIN");
    return client.query<R>(text, values as unknown[]);
  }
  const results = await sendWith<R>(client, text, values, (sql) => `BEGIN;\n${sql}`);
  return results.at(-1)!;
}

/**
 * The transaction's last statement and its `COMMIT` in one round trip (as beginWith); the
 * statement's result, once committed. A statement that fails leaves the transaction to be
 * rolled back, as any failed statement does.
 */
export async function commitWith<R extends pg.QueryResultRow>(
  client: pg.ClientBase,
  text: string,
  values: readonly unknown[] = [],
): Promise<pg.QueryResult<R>> {
  if (!inlinable(values)) {
    const result = await client.query<R>(text, values as unknown[]);
    await client.query("COMMIT");
    return result;
  }
  const results = await sendWith<R>(client, text, values, (sql) => `${sql};\nCOMMIT`);
  return results.at(-2)!;
}

/** One simple query of `around` the statement (simpleStatement); every result, in order. */
async function sendWith<R extends pg.QueryResultRow>(
  client: pg.ClientBase,
  text: string,
  values: readonly unknown[],
  around: (sql: string) => string,
): Promise<pg.QueryResult<R>[]> {
  const statement = simpleStatement(client, text, values, { hot: true });
  try {
    const results = (await client.query(around(statement.sql))) as unknown as pg.QueryResult<R>[];
    statement.settle();
    return results;
  } catch (error) {
    statement.settle(error);
    throw error;
  }
}
