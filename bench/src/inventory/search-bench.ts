import { writeFileSync, mkdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { createPool, DomainError, summarizeLatency } from "@switchboard/kit";
import { inventory } from "@switchboard/proto";
import { inventoryCount, migrateInventory, seedInventory } from "@switchboard/inventory";
import { runSearch } from "@switchboard/inventory/search";
import { buildSearchSql, type SearchSql } from "@switchboard/inventory/search-sql";
import { parseSearchRequest } from "@switchboard/inventory/search-query";
import { benchKinds, benchRandom, secondPageBase, type SearchFilters } from "./bench-cases.js";
import { renderMarkdown, type KindResult } from "./bench-report.js";

/**
 * `npm run bench:search`: p50/p99 of the search SQL round trip on 1,000,000 numbers, per filter
 * kind, against real PostgreSQL (database sb_bench_search, seeded once and reused).
 */
const { values: args } = parseArgs({
  options: {
    url: {
      type: "string",
      default: process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres",
    },
    database: { type: "string", default: "sb_bench_search" },
    count: { type: "string", default: "1000000" },
    iterations: { type: "string", default: "200" },
    out: { type: "string", default: "bench/results" },
  },
});
const count = Number(args.count);
const iterations = Number(args.iterations);

async function ensureDatabase(): Promise<string> {
  const admin = new pg.Client({ connectionString: args.url });
  await admin.connect();
  try {
    const exists = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [
      args.database,
    ]);
    if (exists.rowCount === 0)
      await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(args.database)}`);
  } finally {
    await admin.end();
  }
  const url = new URL(args.url);
  url.pathname = `/${args.database}`;
  return url.toString();
}

const request = (filters: SearchFilters) =>
  inventory.SearchNumbersRequest.fromPartial({ accountId: "acct_bench", ...filters });

async function main() {
  const url = await ensureDatabase();
  const pool = createPool(url, { max: 2, name: "search-bench" });
  await migrateInventory(pool);
  let seedSeconds: number | undefined;
  const existing = await inventoryCount(pool);
  if (existing < count) {
    console.log(`seeding ${count - existing} numbers into ${args.database}…`);
    const started = performance.now();
    await seedInventory(pool, { count, seed: 1 });
    seedSeconds = (performance.now() - started) / 1000;
    console.log(`seeded in ${seedSeconds.toFixed(1)} s`);
  }
  const total = await inventoryCount(pool);
  const client = await pool.connect();
  const timed = async (sql: SearchSql) => {
    const started = performance.now();
    const result = await client.query(sql.text, sql.values);
    return { ms: performance.now() - started, rows: result.rowCount ?? 0 };
  };

  // each measured search: the SQL of a validated request (page 2: with the cursor of page 1)
  const cases: Record<string, SearchSql[]> = {};
  for (const [kind, make] of Object.entries(benchKinds)) {
    const random = benchRandom(1, kind);
    cases[kind] = Array.from({ length: iterations }, () =>
      buildSearchSql(parseSearchRequest(request(make(random))))!,
    ).filter(Boolean);
  }
  const pageRandom = benchRandom(1, "second page");
  cases["second page (cursor)"] = [];
  while (cases["second page (cursor)"].length < iterations) {
    const filters = secondPageBase(pageRandom);
    const first = await runSearch(client, parseSearchRequest(request(filters)));
    if (!first.hasMore) continue;
    const sql = buildSearchSql(
      parseSearchRequest(request({ ...filters, cursor: first.nextCursor })),
    );
    if (sql) cases["second page (cursor)"].push(sql);
  }

  // warm the caches the way a running service would be warm
  for (const sqls of Object.values(cases)) for (const sql of sqls.slice(0, 20)) await timed(sql);

  const results: KindResult[] = [];
  for (const [kind, sqls] of Object.entries(cases)) {
    const samples: number[] = [];
    let rows = 0;
    for (const sql of sqls) {
      const { ms, rows: n } = await timed(sql);
      samples.push(ms);
      rows += n;
    }
    const representative = sqls[0]!;
    const plan = await client.query(
      `EXPLAIN (ANALYZE, BUFFERS) ${representative.text}`,
      representative.values,
    );
    results.push({
      kind,
      ...summarizeLatency(samples),
      meanRows: rows / sqls.length,
      example: { sql: representative.text, values: representative.values },
      plan: plan.rows.map((r: Record<string, string>) => r["QUERY PLAN"]!).join("\n"),
    });
    const last = results[results.length - 1]!;
    console.log(
      `${kind.padEnd(28)} p50 ${last.p50.toFixed(2).padStart(6)} ms  p99 ${last.p99.toFixed(2).padStart(6)} ms`,
    );
  }
  const settings = await client.query(
    "SELECT version() AS version, current_setting('shared_buffers') AS shared_buffers, current_setting('random_page_cost') AS random_page_cost, current_setting('work_mem') AS work_mem",
  );
  client.release();
  await pool.end();

  const report = {
    generated_at: new Date().toISOString(),
    command: "npm run bench:search",
    database: args.database,
    numbers: total,
    iterations_per_kind: iterations,
    page_limit: 50,
    seed_seconds: seedSeconds ?? null,
    machine: {
      cpu: os.cpus()[0]?.model ?? "unknown",
      cores: os.cpus().length,
      memory_gb: Math.round(os.totalmem() / 2 ** 30),
      os: `${os.type()} ${os.release()}`,
      load_average_1_5_15_min: os
        .loadavg()
        .map((v) => v.toFixed(2))
        .join(" "),
      node: process.version,
      postgres: settings.rows[0].version as string,
      shared_buffers: settings.rows[0].shared_buffers as string,
      random_page_cost: settings.rows[0].random_page_cost as string,
      work_mem: settings.rows[0].work_mem as string,
    },
    target_p99_ms: 15,
    kinds: results,
  };
  mkdirSync(args.out, { recursive: true });
  writeFileSync(path.join(args.out, "search.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(path.join(args.out, "search.md"), renderMarkdown(report));
  const failing = results.filter((r) => r.p99 >= 15);
  console.log(
    failing.length === 0
      ? "every kind: p99 < 15 ms"
      : `p99 >= 15 ms: ${failing.map((f) => f.kind).join(", ")}`,
  );
}

main().catch((error: unknown) => {
  console.error(error instanceof DomainError ? `${error.kind}: ${error.detail}` : error);
  process.exit(1);
});
