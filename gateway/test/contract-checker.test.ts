import { describe, expect, it } from "vitest";
import { ContractChecker } from "@switchboard/test-support/contract";

/** The checker itself: it must catch each kind of drift, or the contract tests prove nothing. */
const document = {
  openapi: "3.1.0",
  paths: {
    "/api/things/{id}": {
      get: {
        responses: {
          "200": {
            headers: {
              "X-Request-Id": { $ref: "#/components/headers/X-Request-Id" },
              Link: { required: false },
            },
            content: { "application/json": { schema: { $ref: "#/components/schemas/Thing" } } },
          },
          "404": {
            content: {
              "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } },
            },
          },
        },
      },
    },
    "/api/things/special": { get: { responses: { "204": { description: "nothing" } } } },
  },
  components: {
    headers: { "X-Request-Id": { required: true, schema: { type: "string" } } },
    schemas: {
      Thing: {
        type: "object",
        required: ["id"],
        properties: {
          id: { type: "string", pattern: "^thg_" },
          at: { type: "string", format: "date-time" },
        },
      },
      Problem: {
        type: "object",
        required: ["type", "status"],
        properties: { status: { type: "integer" } },
      },
    },
  },
};

const headers = (entries: Record<string, string>) => new Headers(entries);
const json = { "content-type": "application/json; charset=utf-8", "x-request-id": "req_1" };
const common = {
  "x-request-id": "req_1",
  "api-version": "v1",
  "x-ratelimit-limit": "10",
  "x-ratelimit-remaining": "9",
};

describe("contract checker", () => {
  const checker = new ContractChecker(document);

  it("accepts a response that matches", () => {
    expect(
      checker.check("GET", "http://x/v1/api/things/thg_1", 200, headers(json), '{"id":"thg_1"}'),
    ).toEqual([]);
    expect(checker.check("HEAD", "http://x/api/things/thg_1", 200, headers(json), "")).toEqual([]);
    expect(checker.check("GET", "http://x/api/things/special", 204, headers({}), "")).toEqual([]);
  });

  it("reports an undocumented status", () => {
    expect(checker.check("GET", "http://x/api/things/thg_1", 500, headers(json), "{}")[0]).toMatch(
      /status 500 is not documented for GET \/api\/things\/\{id\}/,
    );
  });

  it("reports a missing required header", () => {
    expect(
      checker.check(
        "GET",
        "http://x/api/things/thg_1",
        200,
        headers({ "content-type": "application/json" }),
        '{"id":"thg_1"}',
      ),
    ).toEqual(["missing required header X-Request-Id"]);
  });

  it("reports a body that breaks the schema, formats included", () => {
    const violations = checker.check(
      "GET",
      "http://x/api/things/x",
      200,
      headers(json),
      '{"id":"nope","at":"yesterday"}',
    );
    expect(violations).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/\/id must match pattern/),
        expect.stringMatching(/\/at must match format/),
      ]),
    );
  });

  it("reports an undocumented media type and a missing body", () => {
    expect(
      checker.check(
        "GET",
        "http://x/api/things/thg_1",
        200,
        headers({ ...json, "content-type": "text/html" }),
        "<p>",
      )[0],
    ).toMatch(/media type text\/html not documented/);
    expect(checker.check("GET", "http://x/api/things/thg_1", 200, headers(json), "")).toEqual([
      "empty body where the document describes one",
    ]);
  });

  it("holds replies outside every operation to problem+json with the common headers", () => {
    const problem = { ...common, "content-type": "application/problem+json" };
    expect(
      checker.check("GET", "http://x/nowhere", 404, headers(problem), '{"type":"t","status":404}'),
    ).toEqual([]);
    expect(
      checker.check(
        "DELETE",
        "http://x/api/things/thg_1",
        405,
        headers(problem),
        '{"type":"t","status":405}',
      ),
    ).toEqual(["missing header Allow"]);
    expect(
      checker.check(
        "GET",
        "http://x/nowhere",
        404,
        headers({ "content-type": "text/plain" }),
        "no",
      ),
    ).toEqual(
      expect.arrayContaining([
        "missing header X-Request-Id",
        expect.stringMatching(/not application\/problem\+json/),
      ]),
    );
  });

  it("prefers the most literal path template", () => {
    expect(
      checker.check("GET", "http://x/api/things/special", 200, headers(json), '{"id":"thg_1"}')[0],
    ).toMatch(/status 200 is not documented for GET \/api\/things\/special/);
  });

  it("keeps every record and lists the failures", () => {
    expect(checker.records.length).toBeGreaterThan(5);
    expect(checker.failures().some((line) => line.startsWith("GET /api/things/thg_1 → 500"))).toBe(
      true,
    );
  });
});
