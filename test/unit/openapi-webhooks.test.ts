import { describe, expect, it } from "vitest";
import { buildOpenApiDocument } from "@switchboard/gateway/openapi/document";
import { webhookRoutes } from "@switchboard/gateway/routes/webhooks";
import { webhookEventTypes } from "@switchboard/webhook/event-catalog";
import { ContractChecker } from "@switchboard/test-support/contract";

type Parameter = { name: string; in: string; required: boolean; example: string };
type WebhookItem = {
  post: {
    parameters: Parameter[];
    requestBody: { content: { "application/json": { schema: unknown; example: unknown } } };
  };
};

const document = buildOpenApiDocument(webhookRoutes, {
  publicUrl: "https://api.example.com",
  version: "test",
}) as unknown as { webhooks: Record<string, WebhookItem> };
const checker = new ContractChecker(document as never);
const exampleHeaders = (item: WebhookItem) =>
  Object.fromEntries(item.post.parameters.map((p) => [p.name.toLowerCase(), p.example]));

/** The document's `webhooks` section: every event the platform delivers, typed and shown. */
describe("the OpenAPI webhooks section", () => {
  it("declares exactly the webhook service's event catalog", () => {
    expect(Object.keys(document.webhooks).sort()).toEqual([...webhookEventTypes].sort());
  });

  it("gives each event a component schema, an example that validates and the delivery headers", () => {
    for (const [type, item] of Object.entries(document.webhooks)) {
      const media = item.post.requestBody.content["application/json"];
      expect(media.schema, type).toMatchObject({ $ref: expect.stringMatching(/Event$/) });
      expect(media.example, type).toMatchObject({ type });
      expect(
        item.post.parameters.filter((p) => p.in === "header" && p.required).map((p) => p.name),
      ).toEqual([
        "webhook-id",
        "webhook-timestamp",
        "webhook-signature",
        "Switchboard-Subscription-Id",
      ]);
      expect(
        checker.checkWebhook(exampleHeaders(item), JSON.stringify(media.example)),
        type,
      ).toEqual([]);
    }
  });

  it("refuses a payload that breaks its event's schema, an unknown type and a missing header", () => {
    const item = document.webhooks["number.held"]!;
    const example = item.post.requestBody.content["application/json"].example as {
      data: Record<string, unknown>;
    };
    const broken = { ...example, data: { ...example.data, number: 14155550123 } };
    expect(checker.checkWebhook(exampleHeaders(item), JSON.stringify(broken))).toEqual([
      expect.stringContaining("/data/number"),
    ]);
    expect(
      checker.checkWebhook(
        exampleHeaders(item),
        JSON.stringify({ ...example, type: "number.lost" }),
      ),
    ).toEqual(["webhook type number.lost is not declared in the document"]);
    const { "webhook-signature": _dropped, ...unsigned } = exampleHeaders(item);
    expect(checker.checkWebhook(unsigned, JSON.stringify(example))).toEqual([
      "webhook number.held: missing header webhook-signature",
    ]);
  });
});
