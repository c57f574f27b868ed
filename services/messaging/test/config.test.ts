import { describe, expect, it } from "vitest";
import { loadMessagingConfig } from "../src/config.js";

describe("messaging configuration", () => {
  it("defaults to the sandbox carrier outside production", () => {
    const config = loadMessagingConfig({ NODE_ENV: "development" });
    expect(config).toMatchObject({
      carrier: "sandbox",
      senderRate: 20,
      sendAttempts: 8,
      sandboxReceiptDelayMs: 1_000,
    });
  });

  it("fails fast, naming the variable, on a carrier it has no adapter for", () => {
    expect(() => loadMessagingConfig({ MESSAGING_CARRIER: "sip" })).toThrow(
      /MESSAGING_CARRIER: has no "sip" adapter; available: sandbox, smpp/,
    );
    expect(() => loadMessagingConfig({ CARRIER: "kannel" })).toThrow(/CARRIER/);
  });

  it("requires SIGNING_KEY_SECRET and CARRIER in production", () => {
    expect(() => loadMessagingConfig({ NODE_ENV: "production" })).toThrow(
      /SIGNING_KEY_SECRET[\s\S]*CARRIER/,
    );
    expect(() =>
      loadMessagingConfig({
        NODE_ENV: "production",
        CARRIER: "sandbox",
        SIGNING_KEY_SECRET: "x".repeat(32),
      }),
    ).not.toThrow();
  });

  it("refuses out-of-range timers", () => {
    expect(() => loadMessagingConfig({ MESSAGING_SENDER_RATE: "0" })).toThrow(
      /MESSAGING_SENDER_RATE/,
    );
    expect(() => loadMessagingConfig({ MESSAGING_SEND_ATTEMPTS: "many" })).toThrow(
      /MESSAGING_SEND_ATTEMPTS/,
    );
  });
});
