import { createHash } from "node:crypto";
import pg from "pg";
import { getOrCreate } from "./get-or-create.js";
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
 * - a statement sent on its own with its parameters becomes a named one, which pg prepares once
 *   per connection, once the pool has sent it often (autoPrepare).
 *
 * Only where the pool's server keeps statements per connection: PGlite serves every
 * connection from one session, where one connection's statement collides with another's. A
 * pool learns which it is once it has connected (`watchPreparedStatements`); until then, and
 * on PGlite, statements are sent as before. Each distinct text is one statement per connection.
 */

/** Pools whose server keeps prepared statements per connection (true) or not (false). */
const poolSupport = new WeakMap<pg.Pool, boolean>();
const poolOfClient = new WeakMap<pg.ClientBase, pg.Pool>();

/** How a statement is prepared: `sbs` by SQL PREPARE (simpleStatement), `sba` by autoPrepare. */
export type StatementKind = "sbs" | "sba";

/**
 * Statements one connection prepares at most, per kind (those it stopped using included: they
 * may still exist); past it, statements are sent as if never prepared.
 */
export const MAX_PREPARED_PER_CONNECTION = 64;
export const MAX_AUTO_PREPARED_PER_CONNECTION = 128;
const capOf: Record<StatementKind, number> = {
  sbs: MAX_PREPARED_PER_CONNECTION,
  sba: MAX_AUTO_PREPARED_PER_CONNECTION,
};

/** One connection's prepared statements of one kind, by name. */
export class ConnectionStatements {
  /** Prepared on this connection. */
  readonly ready = new Set<string>();
  /** No longer prepared here (a failure left it unsure whether they exist, or they are gone). */
  readonly refused = new Set<string>();
  /** Prepared by a query not sent or not answered yet. */
  readonly preparing = new Set<string>();

  constructor(private readonly cap: number) {}

  /** Whether `name` is prepared, or being prepared, here. */
  knows(name: string): boolean {
    return this.ready.has(name) || this.preparing.has(name);
  }

  /** Whether one more name may be prepared here. */
  hasRoom(): boolean {
    return this.ready.size + this.refused.size + this.preparing.size < this.cap;
  }

  /** Stops preparing `name` here. */
  refuse(name: string): void {
    this.ready.delete(name);
    this.preparing.delete(name);
    this.refused.add(name);
  }
}

const clientStatements = new WeakMap<pg.ClientBase, Map<StatementKind, ConnectionStatements>>();

/** `client`'s prepared statements of `kind`. */
export function connectionStatements(
  client: pg.ClientBase,
  kind: StatementKind,
): ConnectionStatements {
  const kinds = getOrCreate(clientStatements, client, () => new Map());
  return getOrCreate(kinds, kind, () => new ConnectionStatements(capOf[kind]));
}

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

/** Whether `client`'s pool is known to keep prepared statements per connection. */
export function clientPreparesStatements(client: pg.ClientBase): boolean {
  const pool = poolOfClient.get(client);
  return pool !== undefined && poolSupport.get(pool) === true;
}

/** One statement for a simple query, and what to tell once that query succeeded or failed. */
export interface SimpleStatement {
  /** The SQL to put in the simple query: one statement, or `PREPARE …;\nEXECUTE …` (two). */
  sql: string;
  /** Told the simple query's outcome: nothing once it succeeded, its error if it failed. */
  settle(error?: unknown): void;
  /** Told that the statement will not be sent after all (its transaction gave up first). */
  abandon(): void;
}

/**
 * `text` with `values` as a statement of a simple query on `client`: `EXECUTE` of the
 * connection's prepared statement for `text` (prepared in the same query the first time) where
 * the pool allows it, else `text` with its parameters written in (inlineParameters). Values are
 * written as untyped literals, as pg sends parameters, so the statement's types are inferred as
 * for `client.query(text, values)`. Prepared from its first send where `hot` (the caller knows it
 * is a statement of a fixed text, sent often), else once the pool has sent the text
 * `AUTO_PREPARE_MIN_USES` times (sentOften).
 */
export function simpleStatement(
  client: pg.ClientBase,
  text: string,
  values: readonly unknown[],
  options: { hot?: boolean } = {},
): SimpleStatement {
  const pool = poolOfClient.get(client);
  const state = pool && poolSupport.get(pool) ? connectionStatements(client, "sbs") : undefined;
  const name = state ? statementName(text, "sbs") : "";
  const known = state?.knows(name) === true;
  if (
    !state ||
    state.refused.has(name) ||
    (!known && !state.hasRoom()) ||
    !values.every(literalable) ||
    (!options.hot && !(sentOften(pool!, text) && provenPreparable(pool!, text)))
  ) {
    return {
      sql: inlineParameters(text, values),
      settle: () => undefined,
      abandon: () => undefined,
    };
  }
  const args = values.length > 0 ? `(${values.map(untypedLiteral).join(", ")})` : "";
  const execute = `EXECUTE ${name}${args}`;
  if (known) {
    // Prepared, or being prepared earlier in the same simple query (a transaction's writes).
    return {
      sql: execute,
      settle: (error) => {
        if (error !== undefined && isStatementGone(error)) state.refuse(name);
      },
      abandon: () => undefined,
    };
  }
  state.preparing.add(name);
  return {
    sql: `PREPARE ${name} AS ${text};\n${execute}`,
    // PREPARE survives a rollback, but a query that failed may have failed before it ran.
    settle: (error) => {
      if (error !== undefined) return state.refuse(name);
      state.preparing.delete(name);
      state.ready.add(name);
    },
    abandon: () => void state.preparing.delete(name),
  };
}

/**
 * Per pool, texts sent often that PostgreSQL was asked to PREPARE on their own: whether it could
 * (a statement whose parameter types its text does not settle, e.g. `$1 IS NULL`, runs with its
 * values written in but cannot be prepared), or the asking still under way.
 */
const preparable = new WeakMap<pg.Pool, Map<string, boolean | "asking">>();

/**
 * Whether `text` is known to PREPARE on `pool`'s server; the first time, asks (a `PREPARE` and
 * `DEALLOCATE` on a connection of the pool, outside any transaction) and answers false until it
 * knows: a statement that cannot be prepared must not fail the transaction it rides in.
 */
function provenPreparable(pool: pg.Pool, text: string): boolean {
  const texts = getOrCreate(preparable, pool, () => new Map<string, boolean | "asking">());
  const known = texts.get(text);
  if (known === undefined) {
    texts.set(text, "asking");
    const probe = `sbp_${statementName(text, "sbs").slice(4)}`;
    pool.query(`PREPARE ${probe} AS ${text};\nDEALLOCATE ${probe}`).then(
      () => texts.set(text, true),
      (error: unknown) => {
        // Refused for its text (class 42: syntax, types): never. Otherwise ask again later.
        if (String((error as { code?: unknown } | null)?.code ?? "").startsWith("42")) {
          texts.set(text, false);
        } else texts.delete(text);
      },
    );
  }
  return known === true;
}

/**
 * Times a pool sends a text before it is prepared (unless its caller declares it hot), as
 * pgjdbc's `prepareThreshold`: texts sent once or twice (a migration, a rare query, a text built
 * for one request) are not worth a place among a connection's statements.
 */
export const AUTO_PREPARE_MIN_USES = 5;
/** Distinct texts a pool counts; texts first seen past it are never prepared. */
const MAX_COUNTED_TEXTS = 5_000;
const textUses = new WeakMap<pg.Pool, Map<string, number>>();

/** Counts one send of `text` on `pool`: whether the pool has now sent it often enough to prepare. */
export function sentOften(pool: pg.Pool, text: string): boolean {
  const uses = getOrCreate(textUses, pool, () => new Map<string, number>());
  const count = uses.get(text);
  if (count === undefined) {
    if (uses.size < MAX_COUNTED_TEXTS) uses.set(text, 1);
    return AUTO_PREPARE_MIN_USES <= 1;
  }
  if (count >= AUTO_PREPARE_MIN_USES) return true;
  uses.set(text, count + 1);
  return count + 1 >= AUTO_PREPARE_MIN_USES;
}

/**
 * The prepared statement is gone (26000: someone ran DEALLOCATE) or outdated (0A000: a schema
 * change altered what it returns); any other failure is the statement's or its query's own.
 */
export function isStatementGone(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "26000" || code === "0A000";
}

/** Names already worked out, per kind, by text (hot statements are sent thousands of times). */
const names = new Map<StatementKind, Map<string, string>>();
/** The same, the other way: each name's text. */
const texts = new Map<string, string>();
const MAX_NAMES = 1_000;

/**
 * The text of a statement this process named (`sbs_…`, `sba_…`) not long ago, for reading what
 * an `EXECUTE name(…)` ran.
 */
export function statementText(name: string): string | undefined {
  return texts.get(name);
}

/**
 * A statement's name, from its text: `sbs_…` for SQL PREPARE, `sba_…` for pg's named statements
 * (autoPrepare); one namespace per connection, so the same text sent both ways must not collide.
 */
export function statementName(text: string, kind: StatementKind): string {
  const ofKind = getOrCreate(names, kind, () => new Map<string, string>());
  let name = ofKind.get(text);
  if (name === undefined) {
    if (ofKind.size >= MAX_NAMES) ofKind.clear();
    if (texts.size >= MAX_NAMES * 2) texts.clear();
    name = `${kind}_${createHash("sha1").update(text).digest("hex").slice(0, 20)}`;
    ofKind.set(text, name);
    texts.set(name, text);
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
