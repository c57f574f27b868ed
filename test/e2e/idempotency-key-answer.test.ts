import { callUnary, createClient, DomainError } from "@switchboard/kit";
import { callcontrol, inventory, messaging, webhook } from "@switchboard/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "../support/platform.js";

/**
 * docs/api.md: an Idempotency-Key is 1–255 characters. Every service that stores keys gives the
 * same answer to a longer one when called directly over gRPC (the gateway refuses it first).
 */
describe("an over-long Idempotency-Key gets one answer from every service", () => {
  let p: TestPlatform;
  const accountId = "acct_keys";
  const tooLong = "k".repeat(256);

  beforeAll(async () => {
    p = await startTestPlatform({ database: "postgres", seed: 10, contract: "off" });
  });
  afterAll(async () => {
    await p?.stop();
  });

  const address = (name: string) => `127.0.0.1:${p.platform.services[name]!.port}`;
  const refusal = async (call: () => Promise<unknown>) => {
    const error = await call().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(DomainError);
    return (error as DomainError).kind;
  };
  const settings = { metadata: { "idempotency-key": tooLong } };

  it("inventory: a hold", async () => {
    const client = createClient(inventory.InventoryServiceClient, address("inventory"));
    const kind = await refusal(() =>
      callUnary(
        "inventory",
        client,
        client.createHold,
        { accountId, number: "+14155550100" },
        settings,
      ),
    );
    expect(kind).toBe("invalid-idempotency-key");
  });

  it("call-control: an outbound call", async () => {
    const client = createClient(callcontrol.CallControlServiceClient, address("call-control"));
    const kind = await refusal(() =>
      callUnary(
        "call-control",
        client,
        client.createOutboundCall,
        { accountId, from: "+14155550100", to: "+14155550101", agent: "agent" },
        settings,
      ),
    );
    expect(kind).toBe("invalid-idempotency-key");
  });

  it("messaging: a template version", async () => {
    const client = createClient(messaging.MessagingServiceClient, address("messaging"));
    const kind = await refusal(() =>
      callUnary(
        "messaging",
        client,
        client.createTemplateVersion,
        { accountId, templateId: "tpl_01jz0000000000000000000000", channels: [], body: "Hi" },
        settings,
      ),
    );
    expect(kind).toBe("invalid-idempotency-key");
  });

  it("webhook: a subscription", async () => {
    const client = createClient(webhook.WebhookServiceClient, address("webhook"));
    const kind = await refusal(() =>
      callUnary(
        "webhook",
        client,
        client.createSubscription,
        { accountId, url: "https://hooks.example.com/x", events: ["*"] },
        settings,
      ),
    );
    expect(kind).toBe("invalid-idempotency-key");
  });
});
