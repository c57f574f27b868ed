import { readFileSync, writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { schemaFile, sdkSchemaSource } from "../../scripts/generate-sdk.mjs";
import { startTestPlatform, type TestPlatform } from "@switchboard/test-support/platform";

/**
 * The SDK's types are generated from the document the platform serves: regenerated here and
 * compared with the committed packages/sdk/src/schema.ts, so the SDK cannot drift from the API.
 * SDK_WRITE=1 writes the file instead.
 */
describe("@switchboard/sdk types", () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ database: "postgres", contract: "off" });
  });
  afterAll(async () => p?.stop());

  it("are what openapi-typescript makes of the served document", async () => {
    const document = (await (await fetch(`${p.url}/v1/openapi.json`)).json()) as unknown;
    const generated = await sdkSchemaSource(document);
    if (process.env.SDK_WRITE) writeFileSync(schemaFile, generated);
    expect(readFileSync(schemaFile, "utf8")).toBe(generated);
  });
});
