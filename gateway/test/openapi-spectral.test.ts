import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "@switchboard/test-support/platform";

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const spectralCli = createRequire(import.meta.url).resolve("@stoplight/spectral-cli/dist/index.js");

interface Schema {
  pattern?: string;
  maxLength?: number;
  maximum?: number;
  maxItems?: number;
  enum?: string[];
  items?: Schema;
}

interface SpectralResult {
  code: string;
  message: string;
  path: (string | number)[];
  severity: number;
}

/** Spectral's findings (JSON) over a document, with the repository's .spectral.yaml. */
async function spectralLint(document: unknown): Promise<SpectralResult[]> {
  const dir = await mkdtemp(join(tmpdir(), "sb-spectral-"));
  try {
    const file = join(dir, "openapi.json");
    await writeFile(file, JSON.stringify(document, null, 2));
    const lint = run(
      process.execPath,
      [
        spectralCli,
        "lint",
        file,
        "--ruleset",
        join(repoRoot, ".spectral.yaml"),
        "--format",
        "json",
        "--quiet",
      ],
      { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 },
    );
    // Errors make the CLI exit non-zero; the report is on stdout either way.
    const { stdout } = await lint.catch((error: { stdout?: string; stderr?: string }) => {
      if (!error.stdout?.trim().startsWith("[")) throw new Error(`spectral: ${error.stderr}`);
      return { stdout: error.stdout };
    });
    return JSON.parse(stdout) as SpectralResult[];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The served document against Spectral's OpenAPI rules and the OWASP API Security Top 10 2023
 * ruleset (.spectral.yaml, where every rule turned off or narrowed says why): zero errors. The
 * gateway is configured as a deployment is, with an https PUBLIC_URL.
 */
describe("the OpenAPI document under Spectral (oas + OWASP)", () => {
  let platform: TestPlatform;
  let results: SpectralResult[];
  let document: {
    paths: Record<
      string,
      Record<
        string,
        {
          parameters: { name: string; in: string; schema: Schema }[];
          responses: Record<string, { "x-problem-kinds"?: string[] }>;
        }
      >
    >;
    components: { schemas: Record<string, { properties: Record<string, Schema> }> };
  };

  beforeAll(async () => {
    platform = await startTestPlatform({
      database: "pglite",
      contract: "off",
      env: { PUBLIC_URL: "https://api.switchboard.test" },
    });
    document = (await (await platform.request("/v1/openapi.json")).json()) as typeof document;
    results = await spectralLint(document);
  }, 180_000);
  afterAll(async () => platform?.stop());

  it("has no errors", () => {
    const errors = results
      .filter((result) => result.severity === 0)
      .map((result) => `${result.code} at ${result.path.join("/")}: ${result.message}`);
    expect(errors).toEqual([]);
    // And every operation says what it does beyond its summary.
    const undescribed = results.filter((result) => result.code === "operation-description");
    expect(undescribed.map((result) => result.path.slice(1, 3).join(" "))).toEqual([]);
  });

  it("declares the bounds the server enforces, and the server holds to them", async () => {
    const token = await platform.token();
    const search = (capabilities: string) =>
      platform.request(`/v1/api/numbers/search?capabilities=${encodeURIComponent(capabilities)}`, {
        token,
      });
    const capabilities = document.paths["/v1/api/numbers/search"]!.get!.parameters.find(
      (parameter) => parameter.name === "capabilities",
    )!.schema;
    const pattern = new RegExp(capabilities.pattern!);
    for (const [value, status] of [
      ["voice,sms", 200],
      [" voice , sms ", 200],
      ["voice,fax", 422],
      ["voice,", 422],
    ] as const) {
      expect(pattern.test(value), value).toBe(status === 200);
      expect((await search(value)).status, value).toBe(status);
    }

    const clientScopes = document.components.schemas.CreateClientRequest!.properties.scopes!;
    expect(clientScopes.items!.enum).toContain("numbers:read");
    expect(clientScopes.maxItems).toBe(64);

    const version = document.components.schemas.SendMessageRequest!.properties.template_version!;
    expect(version.maximum).toBe(2_147_483_647);
    const tooBig = await platform.request("/v1/api/messages/send", {
      method: "POST",
      token,
      json: {
        channel: "sms",
        to: "+14155550101",
        from: "+14155550100",
        template_id: "tpl_01jd2k8w7c3q9v0m5n6p7r8s9t",
        template_version: 2_147_483_648,
        consent_id: "cns_01jd2k8w7c3q9v0m5n6p7r8s9t",
      },
    });
    expect(tooBig.status).toBe(422);
    expect(((await tooBig.json()) as { errors: { pointer: string }[] }).errors).toEqual([
      expect.objectContaining({ pointer: "#/template_version" }),
    ]);
  });

  it("declares 400 malformed-request wherever a path parameter can be badly percent-encoded", async () => {
    const reply = await platform.request("/v1/api/agents/%E0%A4%A", {
      token: await platform.token(),
    });
    expect(reply.status).toBe(400);
    expect(((await reply.json()) as { code: string }).code).toBe("MALFORMED_REQUEST");
    const undeclared = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, operation]) => operation.parameters.some((p) => p.in === "path"))
        .filter(
          ([, operation]) =>
            !operation.responses["400"]?.["x-problem-kinds"]?.includes("malformed-request"),
        )
        .map(([method]) => `${method.toUpperCase()} ${path}`),
    );
    expect(undeclared).toEqual([]);
  });

  it("runs the rules it re-declares: unbounded inputs and missing rate-limit headers fail", async () => {
    const found = await spectralLint({
      openapi: "3.1.0",
      info: { title: "probe", version: "1", description: "A document each rule should fault." },
      servers: [{ url: "https://probe.test", description: "probe", "x-internal": false }],
      paths: {
        "/things": {
          post: {
            operationId: "makeThing",
            summary: "Make a thing",
            parameters: [{ name: "q", in: "query", schema: { type: "string" } }],
            requestBody: {
              content: {
                "application/json": {
                  schema: {
                    type: "object",
                    properties: {
                      count: { type: "integer", minimum: 0 },
                      tags: {
                        type: "array",
                        items: { type: "string", enum: ["a"] },
                        description: "Labels",
                      },
                    },
                  },
                },
              },
            },
            responses: { "201": { description: "Made" } },
          },
        },
      },
    });
    const codes = new Set(found.map((result) => result.code));
    for (const rule of [
      "request-string-limit",
      "request-integer-limit",
      "request-array-limit",
      "rate-limit-headers",
      "oas3-parameter-description",
      "property-description",
    ]) {
      expect(codes, rule).toContain(rule);
    }
    // The undescribed property is the one named, not its described sibling.
    const undescribed = found.filter((result) => result.code === "property-description");
    expect(
      undescribed.map((result) =>
        result.path.includes("count") ? "count" : result.path.join("/"),
      ),
    ).toEqual(["count"]);
  });
});
