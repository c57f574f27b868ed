import { describe, expect, it } from "vitest";
import { digitRuns, hasRun } from "../src/runs.js";

describe("digitRuns", () => {
  it("finds the longest run and the longest run of each digit", () => {
    expect(digitRuns("4155550123")).toEqual({
      maxRun: 4,
      byDigit: [1, 1, 1, 1, 1, 4, 0, 0, 0, 0],
    });
    expect(digitRuns("2122223333")).toEqual({
      maxRun: 4,
      byDigit: [0, 1, 4, 4, 0, 0, 0, 0, 0, 0],
    });
  });

  it("counts a run at the start and at the end", () => {
    expect(digitRuns("7771234999").byDigit[7]).toBe(3);
    expect(digitRuns("7771234999").byDigit[9]).toBe(3);
    expect(digitRuns("7771234999").maxRun).toBe(3);
  });

  it("keeps the longest of several runs of one digit", () => {
    expect(digitRuns("1100111011").byDigit[1]).toBe(3);
    expect(digitRuns("1100111011").byDigit[0]).toBe(2);
  });

  it("has runs of one for numbers without repeats", () => {
    expect(digitRuns("1234567890").maxRun).toBe(1);
    expect(digitRuns("0000000000")).toEqual({
      maxRun: 10,
      byDigit: [10, 0, 0, 0, 0, 0, 0, 0, 0, 0],
    });
  });

  it("answers hasRun for any digit and a given digit", () => {
    expect(hasRun("4155550123", 4)).toBe(true);
    expect(hasRun("4155550123", 5)).toBe(false);
    expect(hasRun("4155550123", 2, 5)).toBe(true);
    expect(hasRun("4155550123", 2, 1)).toBe(false);
  });

  it("rejects non-digits", () => {
    expect(() => digitRuns("41a")).toThrow();
  });
});
