import { describe, expect, it } from "vitest";
import { callcontrol, wire, wireEnum } from "../src/index.js";

describe("proto enums as the API spells them", () => {
  it("are the lower-case names without the prefix, in proto order, placeholders left out", () => {
    expect(wire.callStatus.values).toEqual([
      "queued",
      "initiated",
      "ringing",
      "in_progress",
      "completed",
      "busy",
      "no_answer",
      "failed",
      "canceled",
      "rejected",
    ]);
    expect(wire.callStatus.spell(callcontrol.CallStatus.IN_PROGRESS)).toBe("in_progress");
    expect(wire.callStatus.of("in_progress")).toBe(callcontrol.CallStatus.IN_PROGRESS);
    expect(wire.callStatus.spell(callcontrol.CallStatus.UNSPECIFIED)).toBeUndefined();
    expect(wire.callStatus.spell(callcontrol.CallStatus.UNRECOGNIZED)).toBeUndefined();
    expect(wire.callStatus.is("unspecified")).toBe(false);
    expect(() => wire.callStatus.of("unrecognized" as never)).toThrow(TypeError);
  });

  it("put a dot at the first underscore when asked", () => {
    const kinds = wireEnum(
      { UNSPECIFIED: "K_UNSPECIFIED", API_REQUEST: "K_API_REQUEST", SMOKE_RUN: "K_SMOKE_RUN" },
      { dots: true },
    );
    expect(kinds.values).toEqual(["api.request", "smoke.run"]);
    expect(kinds.of("smoke.run")).toBe("K_SMOKE_RUN");
  });
});
