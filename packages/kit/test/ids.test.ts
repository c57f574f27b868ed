import { describe, expect, it } from "vitest";
import { isId, newId } from "../src/ids.js";

describe("newId", () => {
  it("is <prefix>_<ULID> in lower case and recognised by isId", () => {
    const id = newId("call");
    expect(id).toMatch(/^call_[0-9a-hjkmnp-tv-z]{26}$/);
    expect(isId(id, "call")).toBe(true);
    expect(isId(id, "msg")).toBe(false);
  });

  it("sorts by creation, also within one millisecond, and never repeats", () => {
    const ids = Array.from({ length: 20_000 }, () => newId("req"));
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it("draws the random part uniformly over the 32 symbols", () => {
    const counts = new Map<string, number>();
    let drawn = 0;
    // Ids made in a new millisecond carry 16 fresh random characters.
    for (let i = 0; i < 200; i += 1) {
      const random = newId("evt").slice(4 + 10);
      for (const char of random) counts.set(char, (counts.get(char) ?? 0) + 1);
      drawn += random.length;
      const until = Date.now() + 1;
      while (Date.now() < until);
    }
    expect(counts.size).toBe(32);
    for (const count of counts.values()) expect(count / drawn).toBeLessThan(3 / 32);
  });
});
