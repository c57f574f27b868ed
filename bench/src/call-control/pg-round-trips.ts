import pg from "pg";

/** Statements sent to PostgreSQL, in all and by kind (`VERB schema.table,…`). */
export interface RoundTrips {
  total: number;
  byKind: Map<string, number>;
}

/**
 * Counts every statement the process's pg clients send (each one round trip to PostgreSQL) by
 * wrapping `pg.Client.prototype.query` — the platform runs in this process, every pool built on
 * the one `pg` package. Clients whose application_name is in `ignore` (the benchmark's own
 * observer) are left out. `snapshot()` copies the counts so far.
 */
export function countRoundTrips(ignore: string[]): { snapshot(): RoundTrips } {
  const counts: RoundTrips = { total: 0, byKind: new Map() };
  const proto = pg.Client.prototype as unknown as {
    query: (this: pg.Client, ...args: unknown[]) => unknown;
  };
  const original = proto.query;
  proto.query = function query(this: pg.Client, ...args: unknown[]) {
    const name = (this as unknown as { connectionParameters?: { application_name?: string } })
      .connectionParameters?.application_name;
    if (!name || !ignore.includes(name)) {
      const first = args[0];
      const text =
        typeof first === "string" ? first : (first as { text?: string } | undefined)?.text;
      const kind = statementKind(text ?? "");
      counts.total += 1;
      counts.byKind.set(kind, (counts.byKind.get(kind) ?? 0) + 1);
    }
    return original.apply(this, args);
  };
  return { snapshot: () => ({ total: counts.total, byKind: new Map(counts.byKind) }) };
}

/** The statement's first word and the tables it names after FROM, INTO, UPDATE or JOIN. */
export function statementKind(text: string): string {
  const verb = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? "?";
  if (verb === "SET") return /^\s*SET\s+(LOCAL\s+)?/i.exec(text)?.[0].trim().toUpperCase() ?? verb;
  const tables = new Set<string>();
  for (const match of text.matchAll(/\b(?:FROM|INTO|UPDATE|JOIN)\s+((?:"?\w+"?\.)?"?\w+"?)/gi))
    tables.add(match[1]!.replaceAll('"', ""));
  // A WITH statement's own names (its CTEs) are not tables: keep the schema-qualified ones.
  const named = [...tables].filter((t) => t.includes(".") || !text.includes("."));
  return named.length ? `${verb} ${named.slice(0, 3).join(",")}` : verb;
}

/** Statements between two snapshots, per call, the kinds largest first. */
export function roundTripsPerCall(
  before: RoundTrips,
  after: RoundTrips,
  calls: number,
): { per_call: number; total: number; by_kind: { kind: string; per_call: number }[] } {
  const per = (n: number) => Math.round((n / Math.max(1, calls)) * 100) / 100;
  const kinds = [...after.byKind.entries()]
    .map(([kind, n]) => ({ kind, n: n - (before.byKind.get(kind) ?? 0) }))
    .filter((k) => k.n > 0)
    .sort((a, b) => b.n - a.n);
  const total = after.total - before.total;
  return {
    per_call: per(total),
    total,
    by_kind: kinds.map((k) => ({ kind: k.kind, per_call: per(k.n) })).filter((k) => k.per_call > 0),
  };
}
