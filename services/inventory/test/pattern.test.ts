import { describe, expect, it } from "vitest";
import { keypadDigit, parsePattern } from "../src/pattern.js";

const parse = (input: string) => {
  const result = parsePattern(input);
  if (!result.ok) throw new Error(result.detail);
  return result.pattern;
};

describe("parsePattern", () => {
  it("maps keypad letters to digits, case-insensitively", () => {
    expect(parse("COFFEE").like).toBe("%263333%");
    expect(parse("coffee").like).toBe("%263333%");
    expect(keypadDigit("q")).toBe("7");
    expect(keypadDigit("Z")).toBe("9");
    expect(parse("^415PIZZA").like).toBe("41574992%");
  });

  it("is unanchored by default and honours ^ and $", () => {
    expect(parse("555")).toMatchObject({ like: "%555%", literalPrefix: "" });
    expect(parse("^415")).toMatchObject({ like: "415%", literalPrefix: "415" });
    expect(parse("1234$")).toMatchObject({ like: "%1234", literalPrefix: "" });
    expect(parse("^4155550123$")).toMatchObject({
      like: "4155550123",
      literalPrefix: "4155550123",
    });
  });

  it("turns ? into one digit and * into any run, collapsing runs of *", () => {
    expect(parse("^415?55*1234$")).toMatchObject({ like: "415_55%1234", literalPrefix: "415" });
    expect(parse("1**2")).toMatchObject({ like: "%1%2%" });
    expect(parse("^*55")).toMatchObject({ like: "%55%", literalPrefix: "" });
    expect(parse("^?12")).toMatchObject({ like: "_12%", literalPrefix: "" });
  });

  it("compiles an equivalent regular expression", () => {
    const pattern = parse("^415*COFFEE$");
    expect(pattern.regex.test("4150263333")).toBe(true);
    expect(pattern.regex.test("4152633331")).toBe(false);
    expect(parse("5?5").regex.test("2125951234")).toBe(true);
    expect(parse("5?5").regex.test("2125155123")).toBe(true);
    expect(parse("5?5").regex.test("2125991234")).toBe(false);
  });

  it.each([
    ["", "must not be empty"],
    ["^", "at least one"],
    ["^$", "at least one"],
    ["***", "at least one"],
    ["41-55", "invalid character '-'"],
    ["4 1", "invalid character ' '"],
    ["12^3", "'^' is only allowed at the start"],
    ["1$2", "'$' is only allowed at the end"],
    ["1234567890123456", "at most 15 digits"],
    ["1".repeat(33), "at most 32 characters"],
    ["%12", "invalid character '%'"],
    ["_12", "invalid character '_'"],
  ])("rejects %j", (input, detail) => {
    const result = parsePattern(input);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.detail).toContain(detail);
  });
});
