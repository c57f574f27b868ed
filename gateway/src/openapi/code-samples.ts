/**
 * `x-codeSamples` of every operation (Redoc shows them beside it): a curl command and the same
 * call through the TypeScript SDK (@switchboard/sdk). Both are built from the operation as the
 * document states it (path, the path parameters' and the request body's examples, the security)
 * so they show the story's values; test/sdk/code-samples.integration.test.ts runs every one of them.
 *
 * Both read the environment: SWITCHBOARD_URL (the gateway), SWITCHBOARD_TOKEN (curl: an access
 * token, see POST /oauth/token), SWITCHBOARD_CLIENT_ID and SWITCHBOARD_CLIENT_SECRET.
 */

export interface CodeSample {
  lang: "Shell" | "TypeScript";
  label: "curl" | "SDK (TypeScript)";
  source: string;
}

interface SampleParameter {
  name?: string;
  in?: string;
  required?: boolean;
  schema?: { examples?: unknown[]; enum?: unknown[]; default?: unknown };
  $ref?: string;
}

export interface SampleOperation {
  method: string;
  /** The document's path (`/v1/api/calls/{call_id}`). */
  path: string;
  parameters: SampleParameter[];
  /** The request body's media type and example, if the operation takes one. */
  body?: { mediaType: string; example: unknown } | undefined;
  /** The query the samples send (the route's `examples.query`). */
  query?: Record<string, string | number> | undefined;
  /** The operation needs a bearer token. */
  authenticated: boolean;
  /** The success response: its media type and the component its schema names, if any. */
  success: { mediaType?: string | undefined; component?: string | undefined };
}

/** The package the SDK samples import (a sample's text, not an import of this module). */
const sdkPackage = "@switchboard/sdk";

/** The idempotency key the samples send (the test replaces it with a fresh one each run). */
export const sampleIdempotencyKey = "5f0c2a9e-3b7d-4e21-9a6f-0d8c1b2e4f73";

const exampleOf = (parameter: SampleParameter): unknown =>
  parameter.schema?.examples?.[0] ?? parameter.schema?.enum?.[0] ?? parameter.schema?.default;

/** The path with its parameters replaced by their examples. */
function concretePath(operation: SampleOperation): string {
  return operation.path.replace(/\{([a-z_]+)\}/g, (_, name: string) => {
    const parameter = operation.parameters.find((p) => p.in === "path" && p.name === name);
    return encodeURIComponent(String(exampleOf(parameter ?? {}) ?? name));
  });
}

const pathValues = (operation: SampleOperation) =>
  Object.fromEntries(
    operation.parameters
      .filter((p) => p.in === "path" && p.name)
      .map((p) => [p.name as string, exampleOf(p)]),
  );

const queryString = (query: Record<string, string | number>) =>
  new URLSearchParams(
    Object.entries(query).map(([name, value]): [string, string] => [name, String(value)]),
  ).toString();

/** A value inside single quotes in a POSIX shell. */
const shellQuoted = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

export function curlSample(operation: SampleOperation): string {
  const query = operation.query && Object.keys(operation.query).length > 0;
  const url = `"$SWITCHBOARD_URL${concretePath(operation)}${query ? `?${queryString(operation.query!)}` : ""}"`;
  if (operation.body?.mediaType === "application/x-www-form-urlencoded") {
    // The token endpoint: client_secret_basic, the form in the body.
    const form = Object.entries((operation.body.example ?? {}) as Record<string, string>)
      .map(([name, value]) => `  --data-urlencode ${shellQuoted(`${name}=${value}`)}`)
      .join(" \\\n");
    return `curl -X POST ${url} \\\n  -u "$SWITCHBOARD_CLIENT_ID:$SWITCHBOARD_CLIENT_SECRET" \\\n${form}`;
  }
  const lines = [
    `curl${operation.method === "get" ? "" : ` -X ${operation.method.toUpperCase()}`} ${url}`,
  ];
  if (operation.authenticated) lines.push(`  -H "Authorization: Bearer $SWITCHBOARD_TOKEN"`);
  if (operation.parameters.some((p) => p.$ref === "#/components/parameters/IdempotencyKey")) {
    lines.push(`  -H "Idempotency-Key: ${sampleIdempotencyKey}"`);
  }
  if (operation.body) {
    lines.push(`  -H "Content-Type: ${operation.body.mediaType}"`);
    lines.push(`  -d ${shellQuoted(JSON.stringify(operation.body.example))}`);
  }
  return lines.join(" \\\n");
}

/** `{ a: 1 }` as TypeScript source, indented to sit at `indent`. */
const literal = (value: unknown, indent: string) =>
  JSON.stringify(value, null, 2)
    .replace(/"([a-z_][a-z0-9_]*)":/g, "$1:")
    .replaceAll("\n", `\n${indent}`);

const variableOf = (component: string | undefined) => {
  if (!component) return "result";
  if (component.endsWith("Page")) return "page";
  return component.charAt(0).toLowerCase() + component.slice(1);
};

export function sdkSample(operation: SampleOperation): string {
  const header = [
    ["import { createSwitchboard, unwrap }", `from "${sdkPackage}";`].join(" "),
    "",
    "const switchboard = createSwitchboard({",
    "  baseUrl: process.env.SWITCHBOARD_URL!,",
    "  clientId: process.env.SWITCHBOARD_CLIENT_ID!,",
    "  clientSecret: process.env.SWITCHBOARD_CLIENT_SECRET!,",
    "});",
    "",
  ];
  if (operation.body?.mediaType === "application/x-www-form-urlencoded") {
    return [
      ...header,
      "// Tokens are fetched (and refreshed) for you; this is the one every request sends.",
      "const accessToken = await switchboard.token();",
      "console.log(accessToken.length > 0);",
    ].join("\n");
  }
  const options: string[] = [];
  const path = pathValues(operation);
  const query = operation.query ?? {};
  const params = {
    ...(Object.keys(path).length > 0 ? { path } : {}),
    ...(Object.keys(query).length > 0 ? { query } : {}),
  };
  if (Object.keys(params).length > 0) options.push(`params: ${literal(params, "    ")}`);
  if (operation.body) options.push(`body: ${literal(operation.body.example, "    ")}`);
  const text = operation.success.mediaType && !operation.success.mediaType.includes("json");
  if (text) options.push(`parseAs: "text"`);
  const call = `await switchboard.api.${operation.method.toUpperCase()}("${operation.path}"${
    options.length > 0 ? `, {\n    ${options.join(",\n    ")},\n  }` : ""
  })`;
  const writes = operation.method !== "get";
  const lines = [
    ...header,
    ...(writes
      ? ["// Writes carry an Idempotency-Key the SDK makes: a retry never runs twice."]
      : []),
  ];
  if (operation.success.mediaType === undefined) {
    lines.push(`unwrap(\n  ${call},\n);`, `console.log("done");`);
  } else {
    const name = variableOf(operation.success.component);
    lines.push(`const ${name} = unwrap(\n  ${call},\n);`, `console.log(${name});`);
  }
  return lines.join("\n");
}

export const codeSamples = (operation: SampleOperation): CodeSample[] => [
  { lang: "Shell", label: "curl", source: curlSample(operation) },
  { lang: "TypeScript", label: "SDK (TypeScript)", source: sdkSample(operation) },
];
