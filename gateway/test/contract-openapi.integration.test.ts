import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  PUBLIC_URL,
  startTestPlatform,
  type TestPlatform,
} from "@switchboard/test-support/platform";

const run = promisify(execFile);

/**
 * Tags whose every operation the walk below must see succeed. Other tags' operations are held to
 * the document by their own suites (the platform's contract fetch checks every response).
 */
const walkedTags = new Set(["Platform", "Identity", "Numbers"]);
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const redoclyCli = createRequire(import.meta.url).resolve("@redocly/cli/bin/cli.js");

interface LintReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; severity: string; message: string }[];
}

/** Redocly CLI (`recommended` + redocly.yaml) over a document; its JSON report. */
async function redoclyLint(document: unknown): Promise<LintReport> {
  const dir = await mkdtemp(join(tmpdir(), "sb-openapi-"));
  try {
    const file = join(dir, "openapi.json");
    await writeFile(file, JSON.stringify(document, null, 2));
    const lint = run(
      process.execPath,
      [redoclyCli, "lint", file, "--config", join(repoRoot, "redocly.yaml"), "--format=json"],
      {
        cwd: repoRoot,
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
      },
    );
    // Errors make the CLI exit non-zero; the report is on stdout either way.
    const { stdout } = await lint.catch((error: { stdout?: string }) => ({
      stdout: error.stdout ?? "",
    }));
    return JSON.parse(stdout.slice(stdout.indexOf("{"))) as LintReport;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The served OpenAPI document is valid, lint-clean and true: every response these requests get
 * is checked against it by the platform's contract fetch (a violation fails the request), and
 * every documented operation is seen answering its success status at least once.
 */
describe("the OpenAPI document against the running gateway", () => {
  let platform: TestPlatform;
  let document: {
    paths: Record<string, Record<string, { tags: string[]; responses: Record<string, unknown> }>>;
  };

  beforeAll(async () => {
    platform = await startTestPlatform({ database: "postgres", seed: 200, redis: true });
    document = (await (await platform.request("/v1/openapi.json")).json()) as typeof document;
  });
  afterAll(async () => platform?.stop());

  it("passes Redocly's recommended ruleset with zero errors", async () => {
    const report = await redoclyLint(document);
    const errors = report.problems.filter((p) => p.severity === "error");
    expect(errors.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
    expect(report.totals.errors).toBe(0);
    // Warnings are not allowed to pile up either: each one is fixed or turned off with a reason.
    expect(report.problems.map((p) => `${p.ruleId}: ${p.message}`)).toEqual([]);
  });

  it("teaches before it lists: Getting started and Authentication first, every tag described", () => {
    const { info, tags } = document as unknown as {
      info: { description: string };
      tags: { name: string; description: string }[];
    };
    const headings = [...info.description.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    expect(headings.slice(0, 2)).toEqual(["Getting started", "Authentication"]);
    expect(info.description).toContain(`${PUBLIC_URL}/oauth/token`);
    for (const tag of tags) {
      expect(tag.description, tag.name).not.toBe(`${tag.name} operations.`);
    }
  });

  it("fits a generated client: examples everywhere, named required bodies, open responses, int formats", async () => {
    const full = (await (await platform.request("/v1/openapi.json")).json()) as {
      servers: { url: string }[];
      paths: Record<string, Record<string, Record<string, unknown>>>;
      components: { schemas: Record<string, Record<string, unknown>> };
    };
    expect(full.servers[0]!.url.endsWith("/v1")).toBe(false);
    const missing: string[] = [];
    type Content = Record<string, { schema: { $ref?: string }; example?: unknown }>;
    for (const [path, item] of Object.entries(full.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const name = `${method.toUpperCase()} ${path}`;
        const body = operation.requestBody as { required: boolean; content: Content } | undefined;
        for (const media of Object.values(body?.content ?? {})) {
          if (media.example === undefined) missing.push(`${name} request example`);
          if (!media.schema.$ref) missing.push(`${name} request schema unnamed`);
        }
        const responses = operation.responses as Record<string, { content?: Content }>;
        const success = Object.keys(responses).find((status) => status.startsWith("2"))!;
        for (const media of Object.values(responses[success]!.content ?? {})) {
          if (media.example === undefined) missing.push(`${name} response example`);
        }
      }
    }
    expect(missing).toEqual([]);
    const text = JSON.stringify(full.components.schemas);
    expect(text).toContain('"format":"int32"');
    expect(full.components.schemas.PhoneNumber!.additionalProperties).not.toBe(false);
    const tags = new Set(
      Object.values(full.paths).flatMap((item) =>
        Object.values(item).flatMap((o) => o.tags as string[]),
      ),
    );
    expect(tags.has("Agent")).toBe(false);
  });

  it("shows examples that are valid against their own schemas, bodies required unless optional", async () => {
    const full = (await (await platform.request("/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
      components: Record<string, unknown>;
    };
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    (addFormatsModule as unknown as (a: Ajv2020) => Ajv2020)(ajv);
    ajv.addSchema({ $id: "openapi", components: full.components });
    const inDocument = (schema: unknown) =>
      JSON.parse(
        JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/'),
      ) as object;
    type Content = Record<string, { schema: unknown; example?: unknown }>;
    const invalid: string[] = [];
    const optionalBodies: string[] = [];
    for (const [path, item] of Object.entries(full.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const name = `${method.toUpperCase()} ${path}`;
        const body = operation.requestBody as { required: boolean; content: Content } | undefined;
        if (body && !body.required) optionalBodies.push(name);
        const responses = operation.responses as Record<string, { content?: Content }>;
        const success = Object.keys(responses).find((status) => status.startsWith("2"))!;
        const media = [
          ...Object.entries(body?.content ?? {}).map(
            ([type, m]) => [`request ${type}`, m] as const,
          ),
          ...Object.entries(responses[success]!.content ?? {}).map(
            ([type, m]) => [`${success} ${type}`, m] as const,
          ),
        ];
        for (const [what, { schema, example }] of media) {
          const validate = ajv.compile(inDocument(schema));
          if (!validate(example)) {
            invalid.push(`${name} ${what}: ${ajv.errorsText(validate.errors)}`);
          }
        }
      }
    }
    expect(invalid).toEqual([]);
    // Only actions whose every field has a default take no body; a PATCH always states one.
    expect(optionalBodies.sort()).toEqual([
      "POST /v1/admin/accounts/{account_id}/clients",
      "POST /v1/admin/keys/rotate",
      "POST /v1/api/numbers/holds/{hold_id}/assign",
    ]);
    // Examples are realistic: ids carry their prefix, integers are not zod's ±2^53 bounds.
    const text = JSON.stringify(full.paths);
    expect(text).toContain('"id":"num_01');
    expect(text).not.toContain("9007199254740991");
  });

  it("shows real examples only: no placeholder anywhere, one consistent Call, every error shown", async () => {
    const full = (await (await platform.request("/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, Record<string, unknown>>>;
      components: { schemas: Record<string, { examples?: unknown[] }> };
    };
    // What a schema sampler writes when a schema gives it nothing better.
    const placeholders = new Set([
      "string",
      "2019-08-24T14:15:22Z",
      "2019-08-24",
      "user@example.com",
      "497f6eca-6276-4993-bfeb-53cbbbba6f08",
      "http://example.com",
    ]);
    const found: string[] = [];
    const scan = (value: unknown, where: string, inExample: boolean): void => {
      if (Array.isArray(value)) {
        value.forEach((item, i) => scan(item, `${where}/${i}`, inExample));
      } else if (value !== null && typeof value === "object") {
        for (const [key, inner] of Object.entries(value)) {
          scan(inner, `${where}/${key}`, inExample || key === "example" || key === "examples");
        }
      } else if (inExample && typeof value === "string" && placeholders.has(value)) {
        found.push(`${where}: ${value}`);
      }
    };
    scan(full, "#", false);
    expect(found).toEqual([]);

    // One Call: the component's example is consistent and every operation's call tells its story.
    const call = full.components.schemas.Call!.examples![0] as Record<string, unknown>;
    expect(call.to).not.toBe(call.from);
    expect(call.status).toBe("completed");
    expect(call.ended_at).not.toBeNull();
    expect(call.duration_seconds).toBeGreaterThan(0);
    const json = (path: string, method: string, status: string) =>
      (
        full.paths[path]![method]!.responses as Record<
          string,
          { content: Record<string, { example: Record<string, unknown> }> }
        >
      )[status]!.content["application/json"]!.example;
    expect(json("/v1/api/calls/{call_id}", "get", "200")).toEqual(call);
    expect((json("/v1/api/calls", "get", "200").data as unknown[])[0]).toEqual(call);
    const placed = json("/v1/api/calls/outbound", "post", "201");
    expect(placed).toMatchObject({ id: call.id, to: call.to, from: call.from, status: "queued" });
    expect(placed).toMatchObject({ answered_at: null, ended_at: null, hangup_cause: null });

    // Every problem response shows each of its kinds as the gateway answers it.
    const missing: string[] = [];
    for (const [path, item] of Object.entries(full.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const responses = operation.responses as Record<
          string,
          {
            "x-problem-kinds"?: string[];
            content?: Record<string, { example?: unknown; examples?: Record<string, unknown> }>;
          }
        >;
        for (const [status, response] of Object.entries(responses)) {
          if (status.startsWith("2")) continue;
          for (const [type, media] of Object.entries(response.content ?? {})) {
            if (media.example === undefined && media.examples === undefined) {
              missing.push(`${method} ${path} ${status} ${type}`);
            }
          }
          const problems = response.content?.["application/problem+json"]?.examples ?? {};
          for (const kind of response["x-problem-kinds"] ?? []) {
            expect(problems[kind], `${method} ${path} ${status} ${kind}`).toMatchObject({
              value: {
                type: `${PUBLIC_URL}/v1/errors/${kind}`,
                status: Number(status),
                code: kind.replaceAll("-", "_").toUpperCase(),
                instance: expect.stringMatching(/^urn:switchboard:request:req_/),
              },
            });
          }
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it("gives every operation a curl and an SDK sample", async () => {
    const full = (await (await platform.request("/v1/openapi.json")).json()) as {
      paths: Record<
        string,
        Record<string, { "x-codeSamples"?: { lang: string; label: string; source: string }[] }>
      >;
    };
    const without = Object.entries(full.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(
          ([, operation]) =>
            operation["x-codeSamples"]?.map((sample) => sample.lang).join() !== "Shell,TypeScript",
        )
        .map(([method]) => `${method} ${path}`),
    );
    expect(without).toEqual([]);
    const placeCall = full.paths["/v1/api/calls/outbound"]!.post!["x-codeSamples"]!;
    expect(placeCall[0]!.source).toContain('curl -X POST "$SWITCHBOARD_URL/v1/api/calls/outbound"');
    expect(placeCall[1]!.source).toContain('switchboard.api.POST("/v1/api/calls/outbound"');
  });

  it("obtains tokens with openid-client (RFC 8414 discovery, client credentials)", async () => {
    const config = await oidc.discovery(
      new URL(PUBLIC_URL),
      platform.clientId,
      undefined,
      oidc.ClientSecretBasic(platform.clientSecret),
      {
        algorithm: "oauth2",
        execute: [oidc.allowInsecureRequests],
        // The issuer is the public URL; its requests go to this test's gateway.
        [oidc.customFetch]: (url, options) =>
          platform.fetch(url.replace(PUBLIC_URL, platform.url), options),
      },
    );
    expect(config.serverMetadata().token_endpoint).toBe(`${PUBLIC_URL}/oauth/token`);
    const tokens = await oidc.clientCredentialsGrant(config, {
      scope: "numbers:read numbers:write",
    });
    expect(tokens.token_type).toBe("bearer");
    expect(tokens.scope).toBe("numbers:read numbers:write");
    const search = await platform.request("/v1/api/numbers/search?limit=2", {
      token: tokens.access_token,
    });
    expect(search.status).toBe(200);
    await expect(
      oidc.clientCredentialsGrant(config, { scope: "no:such-scope" }),
    ).rejects.toMatchObject({
      error: "invalid_scope",
    });
  });

  it("describes every response of a walk through every operation", async () => {
    const token = await platform.token();
    const get = (path: string, auth = token) => platform.request(path, { token: auth });
    const post = (path: string, json: unknown = {}, headers: Record<string, string> = {}) =>
      platform.request(path, { method: "POST", token, json, headers });

    expect((await platform.request("/api/health")).status).toBe(200);
    expect((await platform.request("/v1/.well-known/jwks.json")).status).toBe(200);
    expect((await platform.request("/.well-known/oauth-authorization-server")).status).toBe(200);
    expect((await platform.request("/v1/errors/rate-limited")).status).toBe(200);
    expect((await platform.request("/v1/errors/no-such-kind")).status).toBe(404);
    expect((await platform.request("/v1/openapi.json", { method: "HEAD" })).status).toBe(200);

    const page = await get("/v1/api/numbers/search?limit=3&country=US");
    expect(page.status).toBe(200);
    const [first, second] = ((await page.json()) as { data: { number: string }[] }).data;
    const holdOf = async (number: string, key: string) => {
      const response = await post("/v1/api/numbers/hold", { number }, { "Idempotency-Key": key });
      expect(response.status).toBe(201);
      return (await response.json()) as { id: string; number_id: string };
    };
    const held = await holdOf(first!.number, "contract-hold-1");
    expect(
      (
        await post(
          "/v1/api/numbers/hold",
          { number: first!.number },
          { "Idempotency-Key": "contract-hold-1" },
        )
      ).headers.get("idempotent-replayed"),
    ).toBe("true");
    expect(
      (
        await post(
          "/v1/api/numbers/hold",
          { number: second!.number },
          { "Idempotency-Key": "contract-hold-1" },
        )
      ).status,
    ).toBe(409);
    expect((await post("/v1/api/numbers/hold", { number: first!.number })).status).toBe(409);
    expect((await post("/v1/api/numbers/hold", { number: "+1" })).status).toBe(422);
    expect(
      (
        await post(
          "/v1/api/numbers/hold",
          { number: first!.number },
          { "Idempotency-Key": "bad key" },
        )
      ).status,
    ).toBe(400);
    expect((await get(`/v1/api/numbers/holds/${held.id}`)).status).toBe(200);
    expect((await post(`/v1/api/numbers/holds/${held.id}/assign`)).status).toBe(200);
    expect((await get("/v1/api/numbers")).status).toBe(200);
    expect((await get(`/v1/api/numbers/${held.number_id}`)).status).toBe(200);
    expect((await post(`/v1/api/numbers/${held.number_id}/release`)).status).toBe(200);
    const other = await holdOf(second!.number, "contract-hold-2");
    expect((await post(`/v1/api/numbers/holds/${other.id}/release`)).status).toBe(200);

    // Failures outside any operation are problem+json with the common headers too.
    expect((await get("/v1/api/numbers/search", "not-a-token")).status).toBe(401);
    expect(
      (await get("/v1/api/numbers/search", await platform.token("numbers:write"))).status,
    ).toBe(403);
    expect((await get("/v1/api/nothing-here")).status).toBe(404);
    expect((await get("/v2/api/health")).status).toBe(404);
    expect(
      (await platform.request("/v1/api/numbers/search", { method: "PUT", token })).status,
    ).toBe(405);

    expect(platform.contract?.failures()).toEqual([]);
    const seen = new Set(platform.contract?.records.map((r) => `${r.method} ${r.status}`));
    expect(seen.size).toBeGreaterThan(10);
  });

  it("saw every operation of the walked tags answer its success status", () => {
    const missing: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (!operation.tags.some((tag) => walkedTags.has(tag))) continue;
        const success = Object.keys(operation.responses).find((status) => status.startsWith("2"));
        const template = new RegExp(
          `^(/v1)?${path
            .replace(/^\/v1(?=\/)/, "")
            .replace(/\{[^/]+\}/g, "[^/]+")
            .replace(/\./g, "\\.")}$`,
        );
        const hit = platform.contract?.records.some(
          (r) =>
            String(r.status) === success &&
            r.violations.length === 0 &&
            (r.method === "HEAD" ? "GET" : r.method) === method.toUpperCase() &&
            template.test(r.path),
        );
        if (!hit) missing.push(`${method.toUpperCase()} ${path}`);
      }
    }
    // A new operation of these tags fails here until the walk above exercises it.
    expect(missing).toEqual([]);
  });
});
