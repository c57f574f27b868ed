import { DomainError } from "@switchboard/kit";
import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor } from "../src/cursor.js";
import { parseSearchRequest, searchBinding } from "../src/search-query.js";
import { inventory } from "@switchboard/proto";

const kindOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    return error instanceof DomainError ? error.kind : "other";
  }
  return "none";
};

describe("cursors", () => {
  it("round-trips the position", () => {
    const token = encodeCursor("binding", ["+14155550123"]);
    expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(decodeCursor(token, "binding", 1)).toEqual(["+14155550123"]);
    const two = encodeCursor("list", ["2026-11-21T10:00:00.123456Z", "num_x"]);
    expect(decodeCursor(two, "list", 2)).toEqual(["2026-11-21T10:00:00.123456Z", "num_x"]);
  });

  it("rejects garbage and tampering", () => {
    const token = encodeCursor("binding", ["+14155550123"]);
    const [body, sum] = token.split(".") as [string, string];
    const forged = Buffer.from(
      Buffer.from(body, "base64url").toString().replace("0123", "9999"),
    ).toString("base64url");
    for (const bad of [
      "garbage",
      "",
      `${forged}.${sum}`,
      `${body}.AAAAAAAA`,
      `${body}.${sum}.x`,
      `${body.slice(1)}.${sum}`,
      "!!!.???",
    ]) {
      expect(
        kindOf(() => decodeCursor(bad, "binding", 1)),
        bad,
      ).toBe("invalid-cursor");
    }
  });

  it("is bound to its filters and its arity", () => {
    const token = encodeCursor("a", ["x"]);
    expect(kindOf(() => decodeCursor(token, "b", 1))).toBe("invalid-cursor");
    expect(kindOf(() => decodeCursor(token, "a", 2))).toBe("invalid-cursor");
  });

  it("binds search cursors to the normalised filters", () => {
    const base = inventory.SearchNumbersRequest.fromPartial({ country: "us", pattern: "COFFEE" });
    const query = parseSearchRequest(base);
    const cursor = encodeCursor(searchBinding(query.filters), ["+12125550100"]);
    // the same filters written differently: still valid
    const same = parseSearchRequest({ ...base, country: "US", pattern: "*263333*", cursor });
    expect(same.after).toBe("+12125550100");
    // other filters: invalid
    expect(kindOf(() => parseSearchRequest({ ...base, country: "CA", cursor }))).toBe(
      "invalid-cursor",
    );
    expect(kindOf(() => parseSearchRequest({ ...base, type: "local", cursor }))).toBe(
      "invalid-cursor",
    );
    // another limit is fine
    expect(parseSearchRequest({ ...base, limit: 10, cursor }).limit).toBe(10);
  });
});
