import type pg from "pg";
import {
  clientPreparesStatements,
  connectionStatements,
  isStatementGone,
  sentOften,
  statementName,
} from "./prepared-statements.js";

/**
 * Statements a pool sends often are prepared on each connection, as pgjdbc's `prepareThreshold`
 * and Npgsql's auto-prepare do: a parameterized statement sent unnamed is parsed and planned
 * anew each time, and for the short statements of a call's or a message's life PostgreSQL spent
 * as long planning them as running them. Once a pool has sent a text `AUTO_PREPARE_MIN_USES`
 * times (sentOften) it goes out as a pg named statement (`sba_…`), which each connection prepares once.
 *
 * Only parameterized statements (one statement each, by the protocol) of pools whose server
 * keeps statements per connection (not PGlite; see preparedStatementSupport); never a query that
 * is already named or a submittable (a cursor, a stream). A connection prepares at most
 * `MAX_AUTO_PREPARED_PER_CONNECTION`; past it, statements go unnamed. A statement that is gone or
 * outdated on its connection (DEALLOCATE, or a schema change altering its result) fails once and
 * is sent unnamed there from then on.
 */

type QueryFunction = (...args: unknown[]) => unknown;
type Callback = (error: Error | null, result?: unknown) => void;

/** Makes every connection of `pool` prepare the statements the pool sends often. */
export function autoPrepare(pool: pg.Pool): void {
  pool.on("connect", (client) => wrapQuery(client, (text) => sentOften(pool, text)));
}

function wrapQuery(client: pg.ClientBase, isHot: (text: string) => boolean): void {
  // The client's own query, or its class's as it is when called (a wrapper installed later on
  // pg.Client.prototype, by telemetry or a test counting statements, still sees every query).
  const own = Object.getOwnPropertyDescriptor(client, "query")?.value as QueryFunction | undefined;
  const query = (): QueryFunction =>
    own ?? (Object.getPrototypeOf(client) as { query: QueryFunction }).query;
  const statements = connectionStatements(client, "sba");
  const named = (text: string): string | undefined => {
    if (!clientPreparesStatements(client) || !isHot(text)) return undefined;
    const name = statementName(text, "sba");
    if (statements.refused.has(name)) return undefined;
    if (!statements.ready.has(name)) {
      if (!statements.hasRoom()) return undefined;
      statements.ready.add(name);
    }
    return name;
  };
  const forget = (name: string) => (error: unknown) => {
    if (!isStatementGone(error)) return;
    statements.refuse(name);
    const connection = (client as unknown as { connection?: { parsedStatements?: object } })
      .connection;
    if (connection?.parsedStatements) Reflect.deleteProperty(connection.parsedStatements, name);
  };

  (client as unknown as { query: QueryFunction }).query = function (...args: unknown[]) {
    const config = namedConfig(args, named);
    if (!config) return query().apply(this, args);
    const { callback } = config;
    if (callback) {
      return query().call(
        this,
        config.query,
        undefined,
        (error: Error | null, result?: unknown) => {
          if (error) forget(config.query.name)(error);
          callback(error, result);
        },
      );
    }
    const pending = query().call(this, config.query) as Promise<unknown>;
    pending.catch(forget(config.query.name));
    return pending;
  };
}

/** The query of `client.query(...args)` with a name, where it is a hot parameterized statement. */
function namedConfig(
  args: unknown[],
  named: (text: string) => string | undefined,
): { query: pg.QueryConfig & { name: string }; callback?: Callback } | undefined {
  const [first, second, third] = args;
  let text: string;
  let values: unknown;
  let base: object = {};
  if (typeof first === "string") {
    text = first;
    values = second;
  } else if (isPlainQueryConfig(first)) {
    ({ text } = first);
    values = first.values ?? second;
    base = first;
  } else {
    return undefined;
  }
  if (!Array.isArray(values) || values.length === 0) return undefined;
  const callback = [second, third].find((arg): arg is Callback => typeof arg === "function");
  const name = named(text);
  if (name === undefined) return undefined;
  return { query: { ...base, text, values, name }, ...(callback ? { callback } : {}) };
}

const PLANNED_EACH_TIME = Symbol("planned each time");

/**
 * `text` and `values` as a query autoPrepare leaves unnamed, planned for its values each time:
 * for a statement whose best plan depends on them (the length of an array it joins), where
 * PostgreSQL may settle on a generic plan that assumes a hundred rows and scans a table instead.
 */
export function plannedEachTime(
  text: string,
  values: unknown[],
): pg.QueryConfig & { values: unknown[] } {
  return Object.assign({ text, values }, { [PLANNED_EACH_TIME]: true });
}

function isPlainQueryConfig(value: unknown): value is pg.QueryConfig {
  if (typeof value !== "object" || value === null) return false;
  const config = value as Record<string | symbol, unknown>;
  return (
    typeof config.text === "string" &&
    config[PLANNED_EACH_TIME] !== true &&
    config.name === undefined &&
    config.queryMode === undefined &&
    typeof config.submit !== "function" &&
    typeof config.callback !== "function"
  );
}
