import { callControlSettings } from "@switchboard/call-control/config";
import { loadConfig } from "@switchboard/kit";
import { messagingSettings } from "@switchboard/messaging/config";
import { describe, expect, it } from "vitest";

const secret = { SIGNING_KEY_SECRET: "s".repeat(32) };
const smsc = {
  SMPP_HOST: "smsc.example.net",
  SMPP_SYSTEM_ID: "switchboard",
  SMPP_PASSWORD: "secret",
};

// docs/api.md "Carriers": CARRIER names both sides' adapter; VOICE_/MESSAGING_CARRIER override.
describe("the carrier each side uses", () => {
  it("is the sandbox by default outside production", () => {
    expect(loadConfig(messagingSettings, {}).carrier).toBe("sandbox");
    expect(loadConfig(callControlSettings, {}).carrier).toBe("sandbox");
  });

  it("CARRIER=smpp makes messaging an ESME and leaves voice on the sandbox outside production", () => {
    const messaging = loadConfig(messagingSettings, { CARRIER: "smpp", ...smsc });
    expect(messaging).toMatchObject({
      carrier: "smpp",
      smpp: { host: "smsc.example.net", port: 2775, systemId: "switchboard", window: 10 },
    });
    expect(loadConfig(callControlSettings, { CARRIER: "smpp" }).carrier).toBe("sandbox");
  });

  it("smpp without the SMSC's address and credentials is refused, naming each", () => {
    expect(() => loadConfig(messagingSettings, { CARRIER: "smpp" })).toThrow(
      /SMPP_HOST: is required with the smpp carrier[\s\S]*SMPP_SYSTEM_ID[\s\S]*SMPP_PASSWORD/,
    );
  });

  it("in production a side never falls back to the sandbox for a carrier it lacks", () => {
    const production = { NODE_ENV: "production", ...secret };
    expect(() => loadConfig(callControlSettings, { ...production, CARRIER: "smpp" })).toThrow(
      /VOICE_CARRIER: is required in production when CARRIER=smpp/,
    );
    expect(
      loadConfig(callControlSettings, { ...production, CARRIER: "smpp", VOICE_CARRIER: "sandbox" })
        .carrier,
    ).toBe("sandbox");
    expect(() => loadConfig(messagingSettings, production)).toThrow(
      /CARRIER: is required in production/,
    );
  });

  it("MESSAGING_CARRIER overrides CARRIER, and an unknown adapter is refused", () => {
    expect(
      loadConfig(messagingSettings, { CARRIER: "sandbox", MESSAGING_CARRIER: "smpp", ...smsc })
        .carrier,
    ).toBe("smpp");
    expect(() => loadConfig(messagingSettings, { MESSAGING_CARRIER: "sip" })).toThrow(
      /MESSAGING_CARRIER: has no "sip" adapter; available: sandbox, smpp/,
    );
    expect(() => loadConfig(messagingSettings, { CARRIER: "kannel" })).toThrow(/CARRIER/);
  });
});
