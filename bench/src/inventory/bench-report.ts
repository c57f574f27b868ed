/** Statistics and the Markdown rendering of the search benchmark. */
export interface KindResult {
  kind: string;
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
  meanRows: number;
  example: { sql: string; values: unknown[] };
  plan: string;
}

export interface Report {
  generated_at: string;
  command: string;
  database: string;
  numbers: number;
  iterations_per_kind: number;
  page_limit: number;
  seed_seconds: number | null;
  machine: Record<string, string | number>;
  target_p99_ms: number;
  kinds: KindResult[];
}

export function renderMarkdown(report: Report): string {
  const rows = report.kinds.map(
    (k) =>
      `| ${k.kind} | ${k.n} | ${k.p50.toFixed(2)} | ${k.p95.toFixed(2)} | ${k.p99.toFixed(2)} | ${k.max.toFixed(2)} | ${k.meanRows.toFixed(1)} | ${k.p99 < report.target_p99_ms ? "yes" : "**no**"} |`,
  );
  const machine = Object.entries(report.machine).map(([k, v]) => `- ${k}: ${v}`);
  const plans = report.kinds.map(
    (k) =>
      `### ${k.kind}\n\n\`\`\`sql\n${k.example.sql}\n-- values: ${JSON.stringify(k.example.values)}\n\`\`\`\n\n\`\`\`\n${k.plan}\n\`\`\`\n`,
  );
  return `# Inventory search benchmark

Time at the database: the round trip of the search SQL (one \`pg\` client, sequential), for
${report.iterations_per_kind} varied searches per filter kind on ${report.numbers.toLocaleString("en-US")} numbers, page
limit ${report.page_limit} (the query fetches limit + 1). Target: p99 < ${report.target_p99_ms} ms for every kind.

Command: \`${report.command}\` (after \`npx tsc -b services/inventory\`); database \`${report.database}\`,
seeded with \`seedInventory(pool, { count: 1000000, seed: 1 })\` if it holds fewer numbers${
    report.seed_seconds === null
      ? ""
      : ` (this run seeded it in ${report.seed_seconds.toFixed(1)} s)`
  }. Generated ${report.generated_at}.

| kind | n | p50 ms | p95 ms | p99 ms | max ms | rows/query | p99 < ${report.target_p99_ms} ms |
|---|---:|---:|---:|---:|---:|---:|:---:|
${rows.join("\n")}

## Machine

${machine.join("\n")}

## Plans

\`EXPLAIN (ANALYZE, BUFFERS)\` of the first search of each kind.

${plans.join("\n")}`;
}
