import { testDatabaseKinds } from "@switchboard/kit/testing";
import { inventory, wire } from "@switchboard/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { countries } from "../src/area-codes.js";
import { capabilitiesOf } from "../src/capabilities.js";
import { generateNumbers, type GeneratedNumber } from "../src/generator.js";
import { insertNumbers } from "../src/seed.js";
import { parsePattern } from "../src/pattern.js";
import { hasRun } from "../src/runs.js";
import { failure, startHarness, type Harness } from "./harness.js";

const { Capability, NumberStatus, NumberType } = inventory;
const seed = 11;
const count = 3_000;
const generated = [...generateNumbers({ count, seed })];

type Filters = Partial<inventory.SearchNumbersRequest>;

/** What a filter set admits, computed independently of the SQL. */
function admits(n: GeneratedNumber, f: Filters): boolean {
  const pattern = f.pattern === undefined ? undefined : parsePattern(f.pattern);
  const minRepeat = f.minRepeat ?? (f.repeatDigit !== undefined ? 2 : undefined);
  return (
    (f.country === undefined || n.country === f.country.toUpperCase()) &&
    (f.type === undefined || n.type === wire.numberType.spell(f.type)) &&
    (f.prefix === undefined || n.e164.startsWith(f.prefix)) &&
    (pattern === undefined || (pattern.ok && pattern.pattern.regex.test(n.national))) &&
    (minRepeat === undefined || hasRun(n.national, minRepeat, f.repeatDigit)) &&
    (f.region === undefined || n.region === f.region.toUpperCase()) &&
    (f.locality === undefined || n.locality?.toLowerCase() === f.locality.toLowerCase()) &&
    (f.areaCode === undefined || n.areaCode === f.areaCode) &&
    (f.capabilities ?? []).every((c) =>
      capabilitiesOf(n.capabilities).includes(wire.capability.spell(c)!),
    )
  );
}

const cases: [string, Filters][] = [
  ["country (lower case)", { country: "gb" }],
  ["country CA", { country: "CA" }],
  ["type", { type: NumberType.TOLL_FREE }],
  ["type mobile", { type: NumberType.MOBILE }],
  ["prefix", { prefix: "+1415" }],
  ["prefix long", { prefix: "+44207" }],
  ["pattern unanchored", { pattern: "55" }],
  ["pattern anchored start", { pattern: "^41" }],
  ["pattern anchored both", { pattern: "^2?3*9$" }],
  ["pattern end", { pattern: "00$" }],
  ["pattern letters", { pattern: "JAM" }],
  ["pattern wildcards", { pattern: "1?1" }],
  ["pattern end-anchored with wildcard", { pattern: "0*00$" }],
  ["pattern four digits (trigram index)", { pattern: "2020" }],
  ["pattern anchored walk within ranges", { pattern: "^212*0" }],
  ["pattern pairs", { pattern: "12*34" }],
  ["min_repeat", { minRepeat: 3 }],
  ["min_repeat 2", { minRepeat: 2 }],
  ["repeat_digit alone", { repeatDigit: 7 }],
  ["repeat_digit + min_repeat", { repeatDigit: 0, minRepeat: 3 }],
  ["region", { region: "on" }],
  ["region UK nation", { region: "SCT" }],
  ["locality (case-insensitive)", { locality: "SAN FRANCISCO" }],
  ["area_code", { areaCode: "161" }],
  ["capabilities", { capabilities: [Capability.RCS, Capability.MMS] }],
  ["country + type", { country: "GB", type: NumberType.LOCAL }],
  [
    "combined",
    {
      country: "US",
      type: NumberType.LOCAL,
      region: "CA",
      capabilities: [Capability.SMS],
      pattern: "5",
    },
  ],
  ["combined runs + area", { areaCode: "212", minRepeat: 2, capabilities: [Capability.VOICE] }],
  ["combined pattern + country", { country: "GB", pattern: "^20*0$", minRepeat: 2 }],
  ["impossible", { prefix: "+1415", areaCode: "212" }],
  ["unknown country", { country: "FR" }],
];

describe.each(testDatabaseKinds)("SearchNumbers on $name", (kind) => {
  let h: Harness;
  const search = (request: Filters) =>
    h.call(
      h.client.searchNumbers,
      inventory.SearchNumbersRequest.fromPartial({ accountId: "acct_s", ...request }),
    );

  /** Every page of a search, following next_cursor. */
  async function searchAll(filters: Filters, limit = 200): Promise<inventory.PhoneNumber[]> {
    const all: inventory.PhoneNumber[] = [];
    let cursor = "";
    for (;;) {
      const page = await search({ ...filters, limit, cursor });
      all.push(...page.numbers);
      expect(page.hasMore).toBe(page.nextCursor !== "");
      if (!page.hasMore) return all;
      cursor = page.nextCursor;
    }
  }

  beforeAll(async () => {
    h = await startHarness(kind, { seed, count });
  });
  afterAll(() => h?.stop());

  it.each(cases)(
    "filters by %s: exactly the matching numbers, in E.164 order",
    async (_, filters) => {
      const expected = generated.filter((n) => admits(n, filters)).map((n) => n.e164);
      const found = await searchAll(filters);
      expect(found.map((n) => n.number)).toEqual(expected);
      for (const n of found) {
        expect(n.status).toBe(NumberStatus.AVAILABLE);
        expect(n.id).toMatch(/^num_/);
      }
    },
  );

  it("serves exactly the countries the code knows", async () => {
    const { rows } = await h.pool.query(
      "SELECT iso, calling_code FROM inventory.countries ORDER BY iso",
    );
    expect(rows.map((r) => ({ iso: r.iso, callingCode: r.calling_code }))).toEqual(
      [...countries].sort((a, b) => a.iso.localeCompare(b.iso)),
    );
  });

  it("returns the documented item shape", async () => {
    const { numbers } = await search({ prefix: "+1415", limit: 1 });
    const n = numbers[0]!;
    expect(n).toMatchObject({
      country: "US",
      region: "CA",
      locality: "San Francisco",
      areaCode: "415",
      type: NumberType.LOCAL,
      status: NumberStatus.AVAILABLE,
    });
    expect(n.capabilities).toContain(Capability.VOICE);
    expect(n.seatId).toBeUndefined();
  });

  it("pages with the default and given limits", async () => {
    const first = await search({});
    expect(first.numbers).toHaveLength(50);
    expect(first.hasMore).toBe(true);
    const one = await search({ limit: 1 });
    expect(one.numbers).toHaveLength(1);
    expect((await search({ limit: 200 })).numbers).toHaveLength(200);
  });

  it("never skips or repeats while numbers are inserted between pages", async () => {
    const filters: Filters = { country: "US", type: NumberType.LOCAL };
    const before = generated.filter((n) => admits(n, filters)).map((n) => n.e164);
    const seen: string[] = [];
    let cursor = "";
    let round = 0;
    for (;;) {
      const page = await search({ ...filters, limit: 97, cursor });
      seen.push(...page.numbers.map((n) => n.number));
      if (!page.hasMore) break;
      cursor = page.nextCursor;
      // new numbers on both sides of the cursor, in every round
      const extra = [
        `+1201${2000000 + round}`,
        `+1919${9000000 + round}`,
        `+1415${9990000 + round}`,
      ];
      await insertNumbers(
        h.pool,
        extra.map((e164) => ({
          e164,
          callingCode: "1",
          national: e164.slice(2),
          country: "US",
          region: "NY",
          locality: "Test",
          areaCode: e164.slice(2, 5),
          type: "local",
          capabilities: 7,
        })),
      );
      round += 1;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual(seen);
    for (const e164 of before) expect(seen).toContain(e164);
    await h.pool.query("DELETE FROM inventory.numbers WHERE locality = 'Test'");
  });

  it("rejects a cursor used with other filters, and garbage cursors", async () => {
    const page = await search({ country: "US", limit: 5 });
    expect(page.hasMore).toBe(true);
    const changed = await failure(search({ country: "CA", limit: 5, cursor: page.nextCursor }));
    expect(changed.kind).toBe("invalid-cursor");
    expect((await failure(search({ cursor: page.nextCursor }))).kind).toBe("invalid-cursor");
    expect((await failure(search({ country: "US", cursor: "garbage" }))).kind).toBe(
      "invalid-cursor",
    );
    // the same filters in another spelling keep the cursor valid
    const next = await search({ country: "us", limit: 5, cursor: page.nextCursor });
    expect(next.numbers[0]!.number > page.numbers[4]!.number).toBe(true);
  });

  it("answers bad filters with validation-failed and query pointers, never internal", async () => {
    const error = await failure(search({ pattern: "12-34", minRepeat: 12, limit: 500 }));
    expect(error.kind).toBe("validation-failed");
    expect(error.meta.errors?.map((e) => e.pointer)).toEqual([
      "#/query/pattern",
      "#/query/min_repeat",
      "#/query/limit",
    ]);
    for (const bad of [
      { country: "U$" },
      { type: NumberType.UNRECOGNIZED },
      { prefix: "abc" },
      { repeatDigit: 12 },
      { region: "'; DROP" },
      { locality: "" },
      { areaCode: "x" },
      { capabilities: [Capability.UNRECOGNIZED] },
    ] as Filters[]) {
      expect((await failure(search(bad))).kind, JSON.stringify(bad)).toBe("validation-failed");
    }
  });

  it("leaves out held and assigned numbers, and shows lapsed holds again", async () => {
    const [a, b, c] = generated.filter((n) => n.areaCode === "312").map((n) => n.e164);
    await h.pool.query(
      `UPDATE inventory.numbers SET hold_id = 'hld_x', held_by = 'acct_x', held_until = now() + interval '1 hour' WHERE e164 = $1`,
      [a],
    );
    await h.pool.query(
      `UPDATE inventory.numbers SET assigned_account = 'acct_x', assigned_at = now() WHERE e164 = $1`,
      [b],
    );
    await h.pool.query(
      `UPDATE inventory.numbers SET hold_id = 'hld_y', held_by = 'acct_x', held_until = now() - interval '1 second' WHERE e164 = $1`,
      [c],
    );
    const found = (await searchAll({ areaCode: "312" })).map((n) => n.number);
    expect(found).not.toContain(a);
    expect(found).not.toContain(b);
    expect(found).toContain(c);
    const byPattern = (await searchAll({ pattern: `^${b!.slice(2)}$` })).map((n) => n.number);
    expect(byPattern).toEqual([]);
  });
});
