import { DomainError } from "@switchboard/kit";
import { inventory } from "@switchboard/proto";
import { describe, expect, it } from "vitest";
import { buildSearchSql, e164Prefixes, patternPlan } from "../src/search-sql.js";
import { estimateMatchShare } from "../src/pattern.js";
import { parseSearchRequest } from "../src/search-query.js";

const { Capability, NumberType } = inventory;

const request = (fields: Partial<inventory.SearchNumbersRequest>) =>
  inventory.SearchNumbersRequest.fromPartial({ accountId: "acct_x", ...fields });

const failure = (fields: Partial<inventory.SearchNumbersRequest>) => {
  try {
    parseSearchRequest(request(fields));
  } catch (error) {
    if (error instanceof DomainError) return error;
  }
  throw new Error("expected a DomainError");
};

describe("search request validation", () => {
  it.each([
    [{ country: "USA" }, "#/query/country"],
    [{ country: "1" }, "#/query/country"],
    [{ type: NumberType.UNRECOGNIZED }, "#/query/type"],
    [{ prefix: "1415" }, "#/query/prefix"],
    [{ prefix: "+0415" }, "#/query/prefix"],
    [{ prefix: "+" }, "#/query/prefix"],
    [{ pattern: "41-5" }, "#/query/pattern"],
    [{ pattern: "" }, "#/query/pattern"],
    [{ minRepeat: 1 }, "#/query/min_repeat"],
    [{ minRepeat: 11 }, "#/query/min_repeat"],
    [{ repeatDigit: 10 }, "#/query/repeat_digit"],
    [{ repeatDigit: -1 }, "#/query/repeat_digit"],
    [{ region: "CALIFORNIA" }, "#/query/region"],
    [{ locality: "   " }, "#/query/locality"],
    [{ locality: "x".repeat(101) }, "#/query/locality"],
    [{ areaCode: "41a" }, "#/query/area_code"],
    [{ capabilities: [Capability.VOICE, Capability.UNRECOGNIZED] }, "#/query/capabilities"],
    [{ capabilities: [Capability.UNSPECIFIED] }, "#/query/capabilities"],
    [{ limit: 201 }, "#/query/limit"],
    [{ limit: -1 }, "#/query/limit"],
  ])("rejects %j", (fields, pointer) => {
    const error = failure(fields);
    expect(error.kind).toBe("validation-failed");
    expect(error.meta.errors).toEqual([{ pointer, detail: expect.any(String) }]);
  });

  it("reports every bad filter at once", () => {
    const error = failure({ country: "x", type: NumberType.UNSPECIFIED, limit: 500 });
    expect(error.meta.errors?.map((e) => e.pointer)).toEqual([
      "#/query/country",
      "#/query/type",
      "#/query/limit",
    ]);
  });

  it("rejects garbage cursors as invalid-cursor", () => {
    expect(failure({ cursor: "nope" }).kind).toBe("invalid-cursor");
  });

  it("normalises values", () => {
    const query = parseSearchRequest(
      request({
        country: "gb",
        type: NumberType.LOCAL,
        region: "sct",
        locality: " Edinburgh ",
        capabilities: [Capability.SMS, Capability.VOICE],
        repeatDigit: 7,
      }),
    );
    expect(query.filters).toMatchObject({
      country: "GB",
      type: "local",
      region: "SCT",
      locality: "edinburgh",
      capabilities: 3,
      repeatDigit: 7,
      minRepeat: 2,
    });
    expect(query.limit).toBe(50);
  });
});

describe("search SQL", () => {
  const filters = (fields: Partial<inventory.SearchNumbersRequest>) =>
    parseSearchRequest(request(fields)).filters;

  it("turns leading-digit filters into intersected E.164 ranges", () => {
    expect(e164Prefixes(filters({}))).toBeUndefined();
    expect(e164Prefixes(filters({ country: "GB" }))).toEqual(["+44"]);
    expect(e164Prefixes(filters({ areaCode: "415" }))).toEqual(["+1415", "+44415"]);
    expect(e164Prefixes(filters({ pattern: "^20", country: "GB" }))).toEqual(["+4420"]);
    expect(e164Prefixes(filters({ prefix: "+1415555", pattern: "^415" }))).toEqual(["+1415555"]);
    expect(e164Prefixes(filters({ prefix: "+1415", areaCode: "212" }))).toEqual([]);
    expect(e164Prefixes(filters({ country: "FR" }))).toEqual([]);
  });

  it("answers impossible combinations without a query", () => {
    expect(buildSearchSql(parseSearchRequest(request({ country: "FR" })))).toBeUndefined();
  });

  it("expands run lengths into ordered branches only without correlated filters", () => {
    const sql = (fields: Partial<inventory.SearchNumbersRequest>) =>
      buildSearchSql(parseSearchRequest(request(fields)))!.text;
    expect(sql({ minRepeat: 8 })).toContain("n.max_run = 10");
    expect(sql({ minRepeat: 8 }).match(/UNION ALL/g)).toHaveLength(2);
    expect(sql({ repeatDigit: 3, minRepeat: 9 })).toContain("n.digit_runs[4] = 10");
    expect(sql({ minRepeat: 2 })).toContain("n.max_run >= 2");
    expect(sql({ minRepeat: 4, region: "CA" })).not.toContain("UNION ALL");
    expect(sql({ minRepeat: 4, region: "CA" })).toContain("n.max_run >= 4");
  });
});

describe("pattern plans", () => {
  const plan = (pattern: string) => patternPlan(parseSearchRequest(request({ pattern })).filters);

  it("estimates the share of numbers a pattern matches", () => {
    expect(estimateMatchShare("%555%")).toBeCloseTo(0.008);
    expect(estimateMatchShare("%2407%")).toBeCloseTo(0.0007);
    expect(estimateMatchShare("%83%54%")).toBeCloseTo(0.0028);
    expect(estimateMatchShare("%829")).toBeCloseTo(0.001);
    expect(estimateMatchShare("4155550123")).toBeCloseTo(1e-10);
    expect(estimateMatchShare("415555")).toBe(0);
    expect(estimateMatchShare("%12345678901%")).toBe(0);
  });

  it("walks e164 for common or n-gram-less patterns and uses pg_trgm for rare literals", () => {
    expect(plan("555")).toBe("walk");
    expect(plan("55?5")).toBe("walk");
    expect(plan("83*54")).toBe("walk");
    expect(plan("2407")).toBe("index");
    expect(plan("COFFEE")).toBe("index");
    expect(plan("TAX$")).toBe("index");
    expect(plan("^415*1234")).toBe("ranges");
    expect(plan("^41*1234")).toBe("index");
  });

  it("gates the bare e164 walk for rare patterns and correlated filters", () => {
    const sql = (fields: Partial<inventory.SearchNumbersRequest>) =>
      buildSearchSql(parseSearchRequest(request(fields)))!.text;
    expect(sql({ pattern: "555" })).toContain("n.event_sequence >= 0");
    expect(sql({ pattern: "555" })).toContain("(n.national || '') LIKE $1");
    expect(sql({ pattern: "2407" })).not.toContain("n.event_sequence >= 0");
    expect(sql({ pattern: "2407" })).toContain("n.national LIKE");
    expect(sql({ region: "CA" })).not.toContain("n.event_sequence >= 0");
    expect(sql({ capabilities: [Capability.SMS] })).toContain(
      "n.capabilities IN (2, 3, 6, 7, 10, 11, 14, 15)",
    );
  });
});
