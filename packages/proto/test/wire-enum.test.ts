import { describe, expect, expectTypeOf, it } from "vitest";
import { callcontrol, inventory, messaging, wire, wireEnum } from "../src/index.js";

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

  it("spell each member as named when the rule cannot", () => {
    const encodings = wireEnum(
      { UNSPECIFIED: "E_UNSPECIFIED", GSM_7: "E_GSM_7", UCS_2: "E_UCS_2" },
      { spellings: { GSM_7: "GSM-7", UCS_2: "UCS-2" } },
    );
    expect(encodings.values).toEqual(["GSM-7", "UCS-2"]);
    expectTypeOf(encodings.values).toEqualTypeOf<
      readonly ["GSM-7" | "UCS-2", ...("GSM-7" | "UCS-2")[]]
    >();
    expect(encodings.of("UCS-2")).toBe("E_UCS_2");
    expect(encodings.spell("E_GSM_7")).toBe("GSM-7");
    expect(encodings.is("gsm_7")).toBe(false);
  });

  it("spell the contracts' sets as the API and the databases do", () => {
    expect(wire.encoding.values).toEqual(["GSM-7", "UCS-2"]);
    expect(wire.encoding.of("GSM-7")).toBe(messaging.Encoding.GSM_7);
    expect(wire.attestation.values).toEqual(["A", "B", "C"]);
    expect(wire.consentSource.values).toEqual(["web_form", "api", "keyword", "import", "verbal"]);
    expect(wire.numberType.spell(inventory.NumberType.TOLL_FREE)).toBe("toll_free");
  });

  it("keep the capabilities in the order of the inventory's stored bitmasks", () => {
    expect(wire.capability.values).toEqual(["voice", "sms", "mms", "rcs"]);
  });
});
