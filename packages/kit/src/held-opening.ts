import type pg from "pg";
import { simpleStatement } from "./prepared-statements.js";
import { inlinable } from "./sql-literals.js";

/** Statements held back until a client's next statement, to travel with it (holdOpening). */
export interface HeldOpening {
  /** The held statements if none went out yet (now taken: they never will), else undefined. */
  take(): string | undefined;
}

/**
 * Holds `opening` (statements whose answer nobody reads: a BEGIN, a SAVEPOINT) back until
 * `client`'s next query and sends them together, in one round trip: a next query of text and
 * parameters as one simple query (its parameters written in, or an `EXECUTE` of the
 * connection's prepared statement: simpleStatement), its own result returned; any other query
 * after the opening, in a round trip of its own. Until then `client.query` is wrapped; the
 * wrapper goes once the opening is sent or taken.
 */
export function holdOpening(client: pg.ClientBase, opening: readonly string[]): HeldOpening {
  let held: string | undefined = opening.join("; ");
  const ownQuery = Object.getOwnPropertyDescriptor(client, "query");
  const query = client.query;
  const send = (...args: unknown[]) => Reflect.apply(query, client, args) as Promise<unknown>;

  const take = (): string | undefined => {
    const taken = held;
    if (taken === undefined) return undefined;
    held = undefined;
    if (ownQuery) Object.defineProperty(client, "query", ownQuery);
    else delete (client as { query?: unknown }).query;
    return taken;
  };

  const first = async (...args: unknown[]) => {
    const opened = take();
    if (opened === undefined) return send(...args);
    const [text, values = []] = args;
    if (
      typeof text !== "string" ||
      args.length > 2 ||
      !Array.isArray(values) ||
      !inlinable(values)
    ) {
      await send(opened);
      return send(...args);
    }
    if (values.length === 0) {
      // A text of its own: maybe several statements, each answered.
      const results = (await send(`${opened};\n${text}`)) as unknown[];
      const own = results.slice(opening.length);
      return own.length === 1 ? own[0] : own;
    }
    const statement = simpleStatement(client, text, values);
    try {
      const results = (await send(`${opened};\n${statement.sql}`)) as unknown[];
      statement.settle();
      return results.at(-1);
    } catch (error) {
      statement.settle(error);
      throw error;
    }
  };

  Object.defineProperty(client, "query", { value: first, configurable: true, writable: true });
  return { take };
}
