import { createHash } from "node:crypto";
import pg from "pg";
import { inlineParameters } from "./sql-literals.js";

/**
 * Statements PostgreSQL parses and plans once per connection instead of on every send. For the
 * call engine's folded steps and messaging's moves and claims (many CTEs or subqueries each),
 * planning cost more than running them.
 *
 * - `simpleStatement`: a statement that travels in a simple query with others (a transaction's
 *   writes with its COMMIT, in one round trip) used to have its parameters written in. It is
 *   sent as `EXECUTE name(…)` instead, prepared by `PREPARE name AS …` in the same simple query
 *   the first time the connection sends it.
 * - `preparedQuery`: a statement sent on its own with its parameters becomes a named one, which
 *   pg prepares once per connection.
 *
 * Only where the pool's server keeps statements per connection: PGlite serves every
 * connection from one session, where one connection's statement collides with another's. A
 * pool learns which it is once it has connected (`watchPreparedStatements`); until then, and
 * on PGlite, statements are sent as before. Use both for statements of a fixed text (their
 * parameters vary, their SQL does not): each distinct text is one statement per connection.
 */

/** Pools whose server keeps prepared statements per connection (true) or not (false). */
const poolSupport = new WeakMap<pg.Pool, boolean>();
const poolOfClient = new WeakMap<pg.ClientBase, pg.Pool>();

interface ClientStatements {
  /** Names prepared on this connection. */
  ready: Set<string>;
  /** Names this connection no longer prepares (a failure left it unsure whether they exist). */
  refused: Set<string>;
}
const clientStatements = new WeakMap<pg.ClientBase, ClientStatements>();

/**
 * Statements one connection prepares at most (those it stopped using included: they may still
 * exist); past it, statements are written in.
 */
export const MAX_PREPARED_PER_CONNECTION = 64;

const asking = new WeakMap<pg.Pool, Promise<boolean>>();

/** Makes the pool learn, once it has connected, whether its server keeps prepared statements. */
export function watchPreparedStatements(pool: pg.Pool): void {
  pool.on("connect", (client) => {
    poolOfClient.set(client, pool);
    if (!poolSupport.has(pool)) preparedStatementSupport(pool).catch(() => undefined);
  });
}

/**
 * Whether the pool's server keeps prepared statements per connection (not PGlite): one
 * `SELECT version()` on a connection of its own (made with the pool's settings, so it takes no
 * place in the pool), asked until it is answered once.
 */
export function preparedStatementSupport(pool: pg.Pool): Promise<boolean> {
  const known = poolSupport.get(pool);
  if (known !== undefined) return Promise.resolve(known);
  let pending = asking.get(pool);
  if (!pending) {
    pending = askServer(pool).finally(() => asking.delete(pool));
    asking.set(pool, pending);
  }
  return pending;
}

async function askServer(pool: pg.Pool): Promise<boolean> {
  const probe = new pg.Client(pool.options);
  probe.on("error", () => undefined);
  try {
    await probe.connect();
    const { rows } = await probe.query<{ version: string }>("SELECT version()");
    const supported = !/PGlite/i.test(rows[0]?.version ?? "");
    poolSupport.set(pool, supported);
    return supported;
  } finally {
    await probe.end().catch(() => undefined);
  }
}

/**
 * `text` and `values` as a named query (pg prepares it once per connection, then only executes
 * it) where `db` is a pool, or one of its clients, whose server keeps prepared statements; as
 * an unnamed query otherwise.
 */
export function preparedQuery(db: object, text: string, values: unknown[]): pg.QueryConfig {
  const pool = db instanceof pg.Pool ? db : poolOfClient.get(db as pg.ClientBase);
  return pool && poolSupport.get(pool)
    ? { name: statementName(text, "sbq"), text, values }
    : { text, values };
}

/** One statement for a simple query, and what to tell once that query succeeded or failed. */
export interface SimpleStatement {
  /** The SQL to put in the simple query: one statement, or `PREPARE …;\nEXECUTE …` (two). */
  sql: string;
  /** Told the simple query's outcome: nothing once it succeeded, its error if it failed. */
  settle(error?: unknown): void;
}

/**
 * `text` with `values` as a statement of a simple query on `client`: `EXECUTE` of the
 * connection's prepared statement for `text` (prepared in the same query the first time) where
 * the pool allows it, else `text` with its parameters written in (inlineParameters). Values are
 * written as untyped literals, as pg sends parameters, so the statement's types are inferred as
 * for `client.query(text, values)`. Use it for statements of a fixed text (its parameters vary,
 * its SQL does not): each distinct text is one prepared statement per connection.
 */
export function simpleStatement(
  client: pg.ClientBase,
  text: string,
  values: readonly unknown[],
): SimpleStatement {
  const pool = poolOfClient.get(client);
  const state = pool && poolSupport.get(pool) ? statementsOf(client) : undefined;
  const name = state ? statementName(text, "sbs") : "";
  if (
    !state ||
    state.refused.has(name) ||
    (!state.ready.has(name) &&
      state.ready.size + state.refused.size >= MAX_PREPARED_PER_CONNECTION) ||
    !values.every(literalable)
  ) {
    return { sql: inlineParameters(text, values), settle: () => undefined };
  }
  const args = values.length > 0 ? `(${values.map(untypedLiteral).join(", ")})` : "";
  const execute = `EXECUTE ${name}${args}`;
  if (state.ready.has(name)) {
    return {
      sql: execute,
      settle: (error) => {
        if (error !== undefined && isStatementGone(error)) state.refused.add(name);
      },
    };
  }
  return {
    sql: `PREPARE ${name} AS ${text};\n${execute}`,
    // PREPARE survives a rollback, but a query that failed may have failed before it ran.
    settle: (error) => void (error === undefined ? state.ready : state.refused).add(name),
  };
}

/**
 * The prepared statement is gone (26000: someone ran DEALLOCATE) or outdated (0A000: a schema
 * change altered what it returns); any other failure is the statement's or its query's own.
 */
function isStatementGone(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "26000" || code === "0A000";
}

function statementsOf(client: pg.ClientBase): ClientStatements {
  let state = clientStatements.get(client);
  if (!state) {
    state = { ready: new Set(), refused: new Set() };
    clientStatements.set(client, state);
  }
  return state;
}

/** Names already worked out, by kind and text (hot statements are sent thousands of times). */
const names = new Map<string, string>();
const MAX_NAMES = 1_000;

/**
 * A statement's name, from its text: `sbs_…` for SQL PREPARE, `sbq_…` for pg's named statements
 * (one namespace per connection: the same text sent both ways must not collide).
 */
function statementName(text: string, kind: "sbs" | "sbq"): string {
  const key = kind + text;
  let name = names.get(key);
  if (name === undefined) {
    if (names.size >= MAX_NAMES) names.clear();
    name = `${kind}_${createHash("sha1").update(text).digest("hex").slice(0, 20)}`;
    names.set(key, name);
  }
  return name;
}

function literalable(value: unknown): boolean {
  return (
    value === null ||
    value === undefined ||
    typeof value === "string" ||
    typeof value === "boolean" ||
    (typeof value === "number" && Number.isFinite(value)) ||
    value instanceof Date ||
    (Array.isArray(value) && value.every(literalable))
  );
}

/** A parameter as an untyped literal (or NULL), the text pg would send for it. */
function untypedLiteral(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  return pg.escapeLiteral(parameterText(value));
}

function parameterText(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return arrayText(value);
  return String(value);
}

/** An array's text form, `{"a",NULL,"b"}`, as pg writes an array parameter. */
function arrayText(values: readonly unknown[]): string {
  const items = values.map((value) => {
    if (value === null || value === undefined) return "NULL";
    if (Array.isArray(value)) return arrayText(value);
    return `"${parameterText(value).replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
  });
  return `{${items.join(",")}}`;
}
