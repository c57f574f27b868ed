import { describe, expect, it } from "vitest";
import { blocks, callingCodeOf, e164PrefixOf } from "../src/area-codes.js";
import { capabilitiesOf } from "../src/capabilities.js";
import { allocate, generateNumbers } from "../src/generator.js";

const sample = [...generateNumbers({ count: 20_000, seed: 7 })];

describe("generator", () => {
  it("makes valid E.164 numbers with 10-digit national numbers", () => {
    for (const n of sample) {
      expect(n.e164).toMatch(/^\+[1-9][0-9]{1,14}$/);
      expect(n.national).toMatch(/^[0-9]{10}$/);
      expect(n.e164).toBe(`+${n.callingCode}${n.national}`);
      expect(callingCodeOf(n.country)).toBe(n.callingCode);
      expect(n.national.startsWith(n.areaCode)).toBe(true);
    }
  });

  it("uses only known area codes, regions and localities", () => {
    for (const n of sample) {
      const block = blocks.find(
        (b) => b.country === n.country && b.areaCode === n.areaCode && b.type === n.type,
      );
      expect(block, n.e164).toBeDefined();
      expect(n.region).toBe(block!.region);
      if (block!.localities.length > 0) expect(block!.localities).toContain(n.locality);
      else expect(n.locality).toBeNull();
    }
  });

  it("follows the numbering plans", () => {
    for (const n of sample) {
      if (n.callingCode === "1") {
        expect(n.national).toMatch(/^[2-9][0-9]{2}[2-9][0-9]{6}$/);
        expect(n.national.slice(4, 6)).not.toBe("11");
      }
      if (n.country === "GB" && n.areaCode === "20") expect(n.national).toMatch(/^20[378]/);
      if (n.type === "mobile") expect(n.national).toMatch(/^7/);
    }
  });

  it("covers the required reference data", () => {
    const us = blocks.filter((b) => b.country === "US" && b.type === "local");
    expect(us.length).toBeGreaterThanOrEqual(40);
    expect(new Set(us.map((b) => b.region)).size).toBeGreaterThanOrEqual(30);
    expect(blocks.filter((b) => b.country === "CA").length).toBeGreaterThanOrEqual(10);
    const uk = blocks.filter((b) => b.country === "GB");
    for (const code of ["20", "161", "131", "121", "141", "29", "28"]) {
      expect(uk.some((b) => b.areaCode === code && b.type === "local")).toBe(true);
    }
    expect(uk.some((b) => b.type === "mobile" && b.areaCode.startsWith("7"))).toBe(true);
    const tollFree = blocks.filter((b) => b.type === "toll_free").map(e164PrefixOf);
    for (const prefix of [
      "+1800",
      "+1888",
      "+1877",
      "+1866",
      "+1855",
      "+1844",
      "+1833",
      "+44800",
      "+44808",
    ]) {
      expect(tollFree).toContain(prefix);
    }
  });

  it("mixes capabilities by type", () => {
    const share = (type: string, capability: string) => {
      const ofType = sample.filter((n) => n.type === type);
      return (
        ofType.filter((n) => capabilitiesOf(n.capabilities).includes(capability as "rcs")).length /
        ofType.length
      );
    };
    for (const n of sample) expect(capabilitiesOf(n.capabilities)).toContain("voice");
    expect(share("local", "mms")).toBeGreaterThan(0.6);
    expect(share("local", "rcs")).toBeGreaterThan(0.05);
    expect(share("local", "rcs")).toBeLessThan(0.3);
    expect(share("toll_free", "rcs")).toBe(0);
    expect(share("mobile", "rcs")).toBeGreaterThan(0.4);
  });

  it("makes unique numbers in ascending E.164 order", () => {
    expect(new Set(sample.map((n) => n.e164)).size).toBe(sample.length);
    const sorted = [...sample.map((n) => n.e164)].sort();
    expect(sample.map((n) => n.e164)).toEqual(sorted);
  });

  it("is deterministic from the seed", () => {
    const again = [...generateNumbers({ count: 20_000, seed: 7 })];
    expect(again).toEqual(sample);
    const other = [...generateNumbers({ count: 20_000, seed: 8 })];
    expect(other.map((n) => n.e164)).not.toEqual(sample.map((n) => n.e164));
  });

  it("allocates exactly the requested count", () => {
    for (const count of [1, 7, 1000, 123_457]) {
      expect(allocate(count).reduce((sum, a) => sum + a.count, 0)).toBe(count);
    }
    expect(sample).toHaveLength(20_000);
  });
});
