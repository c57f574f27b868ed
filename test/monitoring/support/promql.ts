/** A series a PromQL expression reads: its metric name and its label matchers (`{…}`, or ""). */
export interface SeriesRead {
  name: string;
  matchers: string;
}

const keywords = new Set(["and", "or", "unless", "bool", "offset", "by", "without", "on"]);

/**
 * The series an expression reads, by a small scan that is enough for the rules and panels of
 * this repository (selectors, aggregations, functions, binary operators): grouping clauses and
 * range durations are dropped, then every name not called as a function is a metric name.
 */
export function seriesRead(expr: string): SeriesRead[] {
  const stripped = expr
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ")
    .replace(/\[[^\]]*\]/g, " ");
  const found: SeriesRead[] = [];
  for (const match of stripped.matchAll(
    /(?<![\w.$])([a-zA-Z_:][\w:]*)(?![\w:])\s*(\{[^}]*\})?(?!\s*\()/g,
  )) {
    const name = match[1]!;
    if (!keywords.has(name)) found.push({ name, matchers: match[2] ?? "" });
  }
  return found;
}

/**
 * Metric names a scrape of Prometheus text format declares (`# TYPE`), with the series a
 * histogram or summary expands to.
 */
export function declaredNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of exposition.matchAll(/^# TYPE (\S+) (\w+)$/gm)) {
    names.add(name!);
    if (type === "histogram")
      for (const suffix of ["_bucket", "_sum", "_count"]) names.add(name! + suffix);
    if (type === "summary") for (const suffix of ["_sum", "_count"]) names.add(name! + suffix);
  }
  return names;
}
