import { allCallingCodes, callingCodeOf } from "./area-codes.js";
import { estimateMatchShare, literalRuns } from "./pattern.js";
import type { SearchFilters, SearchQuery } from "./search-query.js";

/**
 * Builds the search SQL. Every index used ends in e164, so a query walks rows already in result
 * order and stops after limit + 1. Two rewrites keep that true for every filter:
 *
 * - Filters that pin the number's leading digits (prefix, country, area code, a pattern anchored
 *   by literal digits) become E.164 ranges, intersected across filters. A range is a condition
 *   on the trailing e164 column of any index, so the scan seeks instead of filtering its way to
 *   numbers that sit far along in e164 order.
 * - "A run of k identical digits" becomes one branch per run length (max_run = k, k + 1, …, or
 *   digit_runs[d] = …), each an ordered scan of its partial index; branches are merged by
 *   e164 (Merge Append) under the outer LIMIT.
 *
 * Country, type, region and locality correlate with e164 order in ways the planner cannot see
 * (every +44 number sorts after every +1 number). With any of them, the bare e164 walk is gated
 * out (see the migration) and runs are not expanded, so the planner walks that filter's own
 * (column, e164) index, along which the remaining filters are spread evenly and its row
 * estimates hold.
 */
export interface SearchSql {
  text: string;
  values: unknown[];
}

export const searchColumns =
  "n.id, n.e164, n.country, n.region, n.locality, n.area_code, n.type, n.capabilities";

const rangeEnd = (prefix: string) => `${prefix}:`; // ':' sorts right after '9'

/** E.164 prefixes the result must start with; undefined: no constraint; []: nothing matches. */
export function e164Prefixes(filters: SearchFilters): string[] | undefined {
  const codes = filters.country
    ? [callingCodeOf(filters.country)].filter((c): c is string => c !== undefined)
    : [...allCallingCodes];
  const sources: string[][] = [];
  if (filters.prefix) sources.push([filters.prefix]);
  if (filters.country) sources.push(codes.map((code) => `+${code}`));
  if (filters.areaCode) sources.push(codes.map((code) => `+${code}${filters.areaCode}`));
  if (filters.pattern?.literalPrefix) {
    sources.push(codes.map((code) => `+${code}${filters.pattern!.literalPrefix}`));
  }
  let result: string[] | undefined;
  for (const source of sources) {
    result =
      result === undefined
        ? source
        : result.flatMap((a) =>
            source.flatMap((b) => (a.startsWith(b) ? [a] : b.startsWith(a) ? [b] : [])),
          );
  }
  return result && [...new Set(result)];
}

/**
 * Whether no filter correlates with e164 order beyond an E.164 range: only then may the search
 * walk the bare e164 index (its gate clause, `event_sequence >= 0`, is added) or merge run branches.
 */
export const walksE164 = (filters: SearchFilters): boolean =>
  !(filters.type || filters.region || filters.locality || filters.country);

/**
 * How a pattern is looked up. A pattern with a literal of 3+ digits that matches under 0.5 % of
 * numbers is looked up in the pg_trgm index, with the e164 walk gated out. Any other pattern is
 * matched while walking e164 order on the covering index (index only, ~0.2 µs a row: a page of
 * a pattern matching 0.5 % of numbers reads ~10,000 index rows in ~2 ms), its LIKE written over
 * an expression (national || '') that no index serves. Both choices rest on an estimate computed from the pattern itself, not
 * on the planner's estimate of LIKE, which is coarse for rare strings. A pattern anchored by 3+
 * literal digits is walked within its E.164 ranges.
 */
export function patternPlan(filters: SearchFilters): "walk" | "index" | "ranges" | undefined {
  const pattern = filters.pattern;
  if (!pattern) return undefined;
  if (pattern.literalPrefix.length >= 3) return "ranges";
  const trigrams = literalRuns(pattern.like).some((run) => run.length >= 3);
  return trigrams && estimateMatchShare(pattern.like) < 0.005 ? "index" : "walk";
}

function patternConditions(filters: SearchFilters, param: (value: unknown) => string): string[] {
  const pattern = filters.pattern;
  const plan = patternPlan(filters);
  if (!pattern || !plan || pattern.like === `${pattern.literalPrefix}%`) return [];
  return plan === "index"
    ? [`n.national LIKE ${param(pattern.like)}`]
    : [`(n.national || '') LIKE ${param(pattern.like)}`]; // a LIKE no index serves
}

/** Run-length branches as SQL conditions with literal (validated) integers. */
function runBranches(filters: SearchFilters): string[] | undefined {
  const k = filters.minRepeat;
  if (k === undefined) return undefined;
  const correlated = !walksE164(filters);
  const lengths = Array.from({ length: 11 - k }, (_, i) => k + i);
  if (filters.repeatDigit !== undefined) {
    const column = `n.digit_runs[${filters.repeatDigit + 1}]`;
    return correlated ? undefined : lengths.map((len) => `${column} = ${len}`);
  }
  return correlated || k < 3 ? undefined : lengths.map((len) => `n.max_run = ${len}`);
}

function runCondition(filters: SearchFilters): string | undefined {
  if (filters.minRepeat === undefined) return undefined;
  return filters.repeatDigit !== undefined
    ? `n.digit_runs[${filters.repeatDigit + 1}] >= ${filters.minRepeat}`
    : `n.max_run >= ${filters.minRepeat}`;
}

/** The search statement, or undefined when the filters cannot match anything. */
export function buildSearchSql(query: SearchQuery): SearchSql | undefined {
  const { filters } = query;
  const values: unknown[] = [];
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  const common = ["n.assigned_account IS NULL", "(n.held_until IS NULL OR n.held_until <= now())"];
  if (walksE164(filters) && patternPlan(filters) !== "index") {
    common.push("n.event_sequence >= 0");
  }
  if (filters.country) common.push(`n.country = ${param(filters.country)}`);
  if (filters.type) common.push(`n.type = ${param(filters.type)}`);
  if (filters.region) common.push(`n.region = ${param(filters.region)}`);
  if (filters.locality) common.push(`lower(n.locality) = ${param(filters.locality)}`);
  if (filters.areaCode) common.push(`n.area_code = ${param(filters.areaCode)}`);
  common.push(...patternConditions(filters, param));
  if (filters.capabilities !== 0) {
    // every stored mask that includes the required bits: estimated exactly from the column's
    // statistics, unlike `(capabilities & m) = m`
    const masks = Array.from({ length: 16 }, (_, m) => m).filter(
      (m) => (m & filters.capabilities) === filters.capabilities,
    );
    common.push(`n.capabilities IN (${masks.join(", ")})`);
  }
  if (query.after !== undefined) common.push(`n.e164 > ${param(query.after)}`);

  const prefixes = e164Prefixes(filters);
  if (prefixes?.length === 0) return undefined;
  const ranges = prefixes?.map(
    (prefix) => `n.e164 >= ${param(prefix)} AND n.e164 < ${param(rangeEnd(prefix))}`,
  ) ?? [undefined];
  const runs = runBranches(filters);
  if (!runs) {
    const condition = runCondition(filters);
    if (condition) common.push(condition);
  }
  const limit = param(query.limit + 1);
  // A pattern walk along e164 reads many rows for one page: it selects e164 alone, which the
  // covering index answers without heap visits, and the page's rows are fetched afterwards.
  const keysOnly = walksE164(filters) && ["walk", "ranges"].includes(patternPlan(filters) ?? "");
  const columns = keysOnly ? "n.e164" : searchColumns;
  const branches = ranges.flatMap((range) =>
    (runs ?? [undefined]).map((run) => {
      const where = [...common, range, run].filter(Boolean).join(" AND ");
      return `SELECT ${columns} FROM inventory.numbers n WHERE ${where} ORDER BY n.e164 LIMIT ${limit}`;
    }),
  );
  let text =
    branches.length === 1
      ? branches[0]!
      : `SELECT * FROM (${branches.map((b) => `(${b})`).join(" UNION ALL ")}) n ORDER BY n.e164 LIMIT ${limit}`;
  if (keysOnly) {
    text = `SELECT ${searchColumns} FROM (${text}) k JOIN inventory.numbers n ON n.e164 = k.e164 ORDER BY n.e164`;
  }
  return { text, values };
}
