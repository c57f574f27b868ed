import { encodeCursor } from "@switchboard/kit";
import { describe, expect, it } from "vitest";
import { parseSearchRequest, searchBinding } from "../src/search-query.js";
import { inventory } from "@switchboard/proto";
import { kindOf } from "@switchboard/test-support/grpc";

describe("search cursors", () => {
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
    expect(
      kindOf(() => parseSearchRequest({ ...base, type: inventory.NumberType.LOCAL, cursor })),
    ).toBe("invalid-cursor");
    // another limit is fine
    expect(parseSearchRequest({ ...base, limit: 10, cursor }).limit).toBe(10);
  });
});
