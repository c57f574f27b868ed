import type { Pool, QueryResultRow } from "pg";

/**
 * The benchmark's own queries on the platform's database, counted: each is a commit of its own,
 * left out of the platform's commits per message.
 */
export interface Observer {
  /** How many queries it has sent so far. */
  readonly queries: number;
  query<R extends QueryResultRow>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
  /** pg_stat_database.xact_commit of the platform's database. */
  commits(): Promise<number>;
  /** The server's version, without its build ("PostgreSQL 15.14 (Debian …)"). */
  postgresVersion(): Promise<string>;
}

export function observe(pool: Pool): Observer {
  let queries = 0;
  const query = <R extends QueryResultRow>(text: string, values?: unknown[]) => {
    queries += 1;
    return pool.query<R>(text, values);
  };
  return {
    get queries() {
      return queries;
    },
    query,
    commits: async () =>
      (
        await query<{ n: number }>(
          "SELECT xact_commit::int AS n FROM pg_stat_database WHERE datname = current_database()",
        )
      ).rows[0]!.n,
    postgresVersion: async () =>
      String((await query<{ v: string }>("SELECT version() AS v")).rows[0]!.v).split(" on ")[0]!,
  };
}
