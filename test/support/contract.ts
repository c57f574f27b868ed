import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";

/**
 * Checks real responses against the served OpenAPI document, so the document cannot drift from
 * the code: the status is listed for the operation, every header the document marks required
 * is present, and the body is valid (JSON Schema 2020-12, ajv) against the response's schema
 * for its media type. Replies outside every operation (unknown path, unsupported version, a
 * method the path lacks) must still be problem+json with the common headers.
 */

type Json = Record<string, unknown>;

interface Operation {
  template: string;
  pattern: RegExp;
  literalSegments: number;
  method: string;
  pointer: string;
  responses: Record<string, Json>;
}

export interface ContractRecord {
  method: string;
  path: string;
  status: number;
  violations: string[];
}

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const DOCUMENT_ID = "https://contract.switchboard.test/openapi.json";
const pointerEscape = (segment: string) => segment.replace(/~/g, "~0").replace(/\//g, "~1");
const mediaTypeOf = (header: string | null) => (header ?? "").split(";")[0]!.trim().toLowerCase();

export class ContractChecker {
  private readonly ajv: Ajv2020;
  private readonly operations: Operation[] = [];
  private readonly validators = new Map<string, ValidateFunction>();
  /** Every response checked so far, with what was wrong with it. */
  readonly records: ContractRecord[] = [];

  constructor(private readonly document: Json) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    this.ajv.addSchema({ ...document, $id: DOCUMENT_ID });
    const paths = (document.paths ?? {}) as Record<string, Record<string, Json>>;
    for (const [template, item] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const segments = template.split("/").filter(Boolean);
        this.operations.push({
          template,
          method: method.toUpperCase(),
          // Requests are matched without their version segment (each path is served both ways).
          pattern: new RegExp(
            `^${(template.replace(/^\/v1(?=\/|$)/, "") || "/").replace(/\{[^/]+\}/g, "[^/]+").replace(/\./g, "\\.")}/?$`,
          ),
          literalSegments: segments.filter((s) => !s.startsWith("{")).length,
          pointer: `#/paths/${pointerEscape(template)}/${method}`,
          responses: (operation.responses ?? {}) as Record<string, Json>,
        });
      }
    }
    // The most literal template wins (`/api/numbers/search` before `/api/numbers/{number_id}`).
    this.operations.sort((a, b) => b.literalSegments - a.literalSegments);
  }

  /** Checks one response; returns (and records) the violations. */
  check(method: string, url: string, status: number, headers: Headers, body: string): string[] {
    const path = new URL(url, "http://x").pathname;
    const versionless = path.replace(/^\/v1(?=\/|$)/, "") || "/";
    const verb = method.toUpperCase() === "HEAD" ? "GET" : method.toUpperCase();
    const operation = this.operations.find((o) => o.method === verb && o.pattern.test(versionless));
    const violations = operation
      ? this.checkOperation(operation, method.toUpperCase(), status, headers, body)
      : this.checkUnrouted(status, headers, body);
    this.records.push({ method: method.toUpperCase(), path, status, violations });
    return violations;
  }

  /**
   * Checks one webhook delivery against the document's `webhooks` entry for its type: the type
   * is declared, every required header is present and the body validates against its schema.
   */
  checkWebhook(headers: Record<string, string | string[] | undefined>, body: string): string[] {
    let type: unknown;
    try {
      type = (JSON.parse(body) as { type?: unknown }).type;
    } catch {
      return ["webhook body is not JSON"];
    }
    const webhooks = (this.document.webhooks ?? {}) as Record<string, { post?: Json }>;
    const operation = typeof type === "string" ? webhooks[type]?.post : undefined;
    if (!operation) return [`webhook type ${String(type)} is not declared in the document`];
    const missing = ((operation.parameters ?? []) as Json[])
      .map((parameter) => this.resolve(parameter))
      .filter((p) => p.in === "header" && p.required === true)
      .map((p) => String(p.name))
      .filter((name) => headers[name.toLowerCase()] === undefined)
      .map((name) => `webhook ${String(type)}: missing header ${name}`);
    const pointer = `#/webhooks/${pointerEscape(type as string)}/post/requestBody/content/application~1json/schema`;
    return [
      ...missing,
      ...this.validate(pointer, body).map((v) => `webhook ${String(type)}: ${v}`),
    ];
  }

  /** Every violation recorded, one line each. */
  failures(): string[] {
    return this.records.flatMap((r) =>
      r.violations.map((v) => `${r.method} ${r.path} → ${r.status}: ${v}`),
    );
  }

  private checkOperation(
    op: Operation,
    method: string,
    status: number,
    headers: Headers,
    body: string,
  ) {
    const key = [String(status), `${String(status)[0]}XX`, "default"].find(
      (k) => k in op.responses,
    );
    if (!key) return [`status ${status} is not documented for ${op.method} ${op.template}`];
    const response = this.resolve(op.responses[key]!);
    const pointer = `${op.pointer}/responses/${key}`;
    return [
      ...this.checkHeaders((response.headers ?? {}) as Record<string, Json>, headers),
      ...(method === "HEAD" ? [] : this.checkBody(response, pointer, headers, body)),
    ];
  }

  private checkUnrouted(status: number, headers: Headers, body: string): string[] {
    const violations: string[] = [];
    // Unknown path or version (404), a method the path lacks (405), or rate-limited before routing.
    if (![404, 405, 429].includes(status))
      violations.push(`status ${status} outside every documented operation`);
    const commonHeaders = [
      "X-Request-Id",
      "API-Version",
      "X-RateLimit-Limit",
      "X-RateLimit-Remaining",
    ];
    const specific = status === 405 ? ["Allow"] : status === 429 ? ["Retry-After"] : [];
    for (const name of [...commonHeaders, ...specific]) {
      if (!headers.has(name)) violations.push(`missing header ${name}`);
    }
    if (mediaTypeOf(headers.get("content-type")) !== "application/problem+json") {
      violations.push(
        `content type ${headers.get("content-type")} is not application/problem+json`,
      );
      return violations;
    }
    return [...violations, ...this.validate("#/components/schemas/Problem", body)];
  }

  private checkHeaders(documented: Record<string, Json>, headers: Headers): string[] {
    return Object.entries(documented)
      .filter(([, header]) => this.resolve(header).required === true)
      .filter(([name]) => !headers.has(name))
      .map(([name]) => `missing required header ${name}`);
  }

  private checkBody(response: Json, pointer: string, headers: Headers, body: string): string[] {
    const content = (response.content ?? {}) as Record<string, Json>;
    if (body === "") {
      return Object.keys(content).length > 0 ? ["empty body where the document describes one"] : [];
    }
    const mediaType = mediaTypeOf(headers.get("content-type"));
    if (!(mediaType in content)) {
      return [
        `media type ${mediaType} not documented (documented: ${Object.keys(content).join(", ") || "none"})`,
      ];
    }
    if (!content[mediaType]!.schema) return [];
    return this.validate(`${pointer}/content/${pointerEscape(mediaType)}/schema`, body);
  }

  private validate(pointer: string, body: string): string[] {
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch {
      return ["body is not JSON"];
    }
    let validator = this.validators.get(pointer);
    if (!validator) {
      validator = this.ajv.compile({ $ref: `${DOCUMENT_ID}${pointer}` });
      this.validators.set(pointer, validator);
    }
    if (validator(value)) return [];
    return (validator.errors ?? []).map(
      (e) => `body ${e.instancePath || "/"} ${e.message ?? "is invalid"}`,
    );
  }

  private resolve(value: Json): Json {
    const ref = value.$ref;
    if (typeof ref !== "string") return value;
    const target = ref
      .slice(2)
      .split("/")
      .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
      .reduce<unknown>((node, segment) => (node as Json | undefined)?.[segment], this.document);
    return this.resolve((target ?? {}) as Json);
  }
}

/** Fetches the served document and builds a checker from it. */
export async function contractFrom(baseUrl: string): Promise<ContractChecker> {
  const response = await fetch(`${baseUrl}/v1/openapi.json`);
  if (response.status !== 200) throw new Error(`GET /v1/openapi.json answered ${response.status}`);
  return new ContractChecker((await response.json()) as Json);
}

export class ContractViolationError extends Error {
  override readonly name = "ContractViolationError";
}

/**
 * A fetch that checks every response against the document. `enforce` throws on a violation
 * (the test fails where the drift happened); otherwise violations are only recorded.
 */
export function contractFetch(
  checker: ContractChecker,
  options: { enforce: boolean },
): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    const method = (
      init?.method ?? (input instanceof Request ? input.method : "GET")
    ).toUpperCase();
    const url = input instanceof Request ? input.url : String(input);
    const body = method === "HEAD" ? "" : await response.clone().text();
    const violations = checker.check(method, url, response.status, response.headers, body);
    if (violations.length > 0 && options.enforce) {
      throw new ContractViolationError(
        `${method} ${new URL(url).pathname} → ${response.status} breaks the OpenAPI document:\n  ${violations.join("\n  ")}`,
      );
    }
    return response;
  };
}
