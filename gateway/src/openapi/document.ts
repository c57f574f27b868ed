import { sample } from "openapi-sampler";
import type { z } from "zod";
import type { ProblemKind } from "@switchboard/kit";
import { scopes } from "../auth/index.js";
import type { RouteSpec } from "../http/route-spec.js";
import { httpStatusOf } from "../http/problem.js";
import { problemSchema } from "../schemas/common.js";
import { commonHeaders, headerComponents, responseHeader } from "./headers.js";
import { isTokenEndpoint, oauthErrorSchema, withOAuthErrors } from "./oauth.js";
import { acceptsIdempotencyKey, commonProblems } from "./problems.js";
import { schemaRegistry, type JsonSchema } from "./schemas.js";
import { webhooksSection } from "./webhooks.js";
import { codeSamples } from "./code-samples.js";
import { problemExamples } from "./problem-examples.js";

function queryParameters(schema: z.ZodType, toSchema: (s: z.ZodType, io: "input") => JsonSchema) {
  const json = toSchema(schema, "input") as {
    properties?: Record<string, JsonSchema>;
    required?: string[];
  };
  return Object.entries(json.properties ?? {}).map(([name, property]) => ({
    name,
    in: "query",
    required: json.required?.includes(name) ?? false,
    ...(typeof property.description === "string" ? { description: property.description } : {}),
    schema: property,
  }));
}

/** What a path parameter names: `call_id` → "call", `id` → the resource of the path. */
const nounOf = (name: string, path: string) => {
  if (name === "kind") return "problem kind";
  if (name === "id" && path.startsWith("/api/usage")) return "usage record";
  return name.replace(/_id$/, "").replaceAll("_", " ");
};

function pathParameters(route: RouteSpec, toSchema: (s: z.ZodType, io: "input") => JsonSchema) {
  const json = route.params
    ? (toSchema(route.params, "input") as { properties?: Record<string, JsonSchema> })
    : { properties: {} };
  return [...route.path.matchAll(/\{([a-z_]+)\}/g)].map(([, name]) => {
    const schema = json.properties?.[name as string] ?? { type: "string" };
    const noun = nounOf(name as string, route.path);
    return {
      name: name as string,
      in: "path",
      required: true,
      description:
        typeof schema.description === "string"
          ? schema.description
          : noun === "problem kind"
            ? "A problem kind: the last segment of a problem's `type`"
            : `The ${noun}'s id`,
      schema,
    };
  });
}

/** What the last path parameter of a route names, for its not-found example ("the call"). */
const routeNoun = (route: RouteSpec) => {
  const names = [...route.path.matchAll(/\{([a-z_]+)\}/g)].map(([, name]) => name as string);
  const last = names[names.length - 1];
  return last ? nounOf(last, route.path) : "resource";
};

/** Statuses a replay of a stored response can have besides the success: the kept 4xx. */
const replayable = (status: number) =>
  status >= 400 && status < 500 && ![401, 403, 429].includes(status);

function problemResponses(
  kinds: ProblemKind[],
  idempotent: boolean,
  context: { errorsUrl: string; scope: string | null; noun: string },
) {
  const byStatus = new Map<number, ProblemKind[]>();
  for (const kind of new Set(kinds)) {
    const status = httpStatusOf(kind);
    byStatus.set(status, [...(byStatus.get(status) ?? []), kind]);
  }
  return Object.fromEntries(
    [...byStatus.entries()].map(([status, list]) => {
      const optional = [
        ...(idempotent && replayable(status) ? ["Idempotent-Replayed"] : []),
        // 409 idempotency-in-progress carries Retry-After; the other 409 kinds do not.
        ...(list.includes("idempotency-in-progress") ? ["Retry-After"] : []),
      ];
      return [
        String(status),
        {
          description: `Problem: ${list.join(", ")}`,
          headers: responseHeader(commonHeaders(status), optional),
          content: {
            "application/problem+json": {
              schema: { $ref: "#/components/schemas/Problem" },
              examples: problemExamples(list, context),
            },
          },
          "x-problem-kinds": list,
        },
      ];
    }),
  );
}

const byStatus = (responses: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));

/** Descriptions of the route table's tags (a tag without one is described by its name). */
const tagDescriptions: Record<string, string> = {
  Platform: "Health, this document and the documentation of every problem kind.",
  Identity: "OAuth 2.1 client credentials, discovery and the signing keys (JWKS).",
  Numbers: "Number inventory: search, holds, assignment and release.",
  Administration:
    "Accounts, OAuth clients, service tokens and signing keys: scope admin, for credentials of the platform's own account only.",
  Agents: "The people who take calls, by a name unique in the account.",
  Seats:
    "Where an agent sits: a SIP account its phone registers with (its password shown once), and the calls it may hold at once.",
  Routes: "Which seat an inbound call to one of the account's numbers rings.",
  Calls:
    "Outbound calls from a seat (signed with a STIR/SHAKEN PASSporT), inbound calls answered under a route, their status and hangup.",
  Templates: "Message templates: versioned, signed, with variables; a send names one.",
  Consents: "A recipient's consent to messages on a channel; STOP revokes it, START restores it.",
  Messages: "SMS, MMS and RCS sent from the account's numbers with a template and a consent.",
  Usage: "The signed, append-only ledger of the account's usage: every request and billable fact.",
  Webhooks:
    "Subscriptions to the platform's events, signed per Standard Webhooks and retried; their delivery log, and the account's recent events.",
  Sandbox: "The simulated network's controls (only where a side runs the sandbox carrier).",
  "Agent smoke":
    "One request that drives every service through its real path and reports each step.",
};

/** The reference's first sections (Redoc shows them before the operations). */
const gettingStarted = (publicUrl: string, permissions: readonly string[]) =>
  [
    "## Getting started",
    "Three requests take you from credentials to a number of your own:",
    `1. **A token.** \`curl -u "$CLIENT_ID:$CLIENT_SECRET" -d grant_type=client_credentials ${publicUrl}/oauth/token\` answers \`{"access_token": "…", "expires_in": 600}\`.`,
    `2. **Search.** \`curl -H "Authorization: Bearer $TOKEN" "${publicUrl}/v1/api/numbers/search?country=US&capabilities=sms&limit=3"\`.`,
    `3. **Hold, then assign.** \`curl -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" -H "Idempotency-Key: $(uuidgen)" -d '{"number":"+1…"}' ${publicUrl}/v1/api/numbers/hold\`, then \`POST /v1/api/numbers/holds/{hold_id}/assign\`.`,
    "The typed TypeScript client `@switchboard/sdk` does the same with `createSwitchboard({ baseUrl, clientId, clientSecret })` and `numbers.search`, `numbers.hold`.",
    "## Authentication",
    `Every operation but the public ones (health, this document, the problem kinds, discovery) needs \`Authorization: Bearer <token>\`: an OAuth 2.1 access token from \`POST ${publicUrl}/oauth/token\` (client credentials; \`client_secret_basic\` or \`client_secret_post\`; \`scope\` may narrow it to some of the client's permissions), or a platform service token (\`sbt_…\`). A token carries its account and permissions (scopes: ${permissions.map((p) => `\`${p}\``).join(", ")}); an operation names the one it needs (403 insufficient-scope otherwise). Access tokens are EdDSA JWTs verifiable with the keys at \`/.well-known/jwks.json\`; a disabled client's tokens stop working on every replica within a second. Five wrong secrets lock a client id for the address that sent them, with exponential backoff.`,
  ].join("\n\n");

/** The OpenAPI 3.1 document, built at run time from the route table. */
export function buildOpenApiDocument(
  routes: RouteSpec[],
  options: { publicUrl: string; version: string; errorsUrl?: string },
) {
  const errorsUrl = options.errorsUrl ?? `${options.publicUrl}/v1/errors`;
  const { components, toSchema } = schemaRegistry();
  toSchema(problemSchema, "output");
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const success = route.success;
    const successHeaders = [
      ...commonHeaders(success.status),
      ...(success.headers ?? []),
      ...(route.paginated ? ["Link"] : []),
    ];
    const problemContext = { errorsUrl, scope: route.scope, noun: routeNoun(route) };
    const operation: Record<string, unknown> = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description ? { description: route.description } : {}),
      tags: [route.tag],
      security: route.scope
        ? [{ oauth2: [route.scope] }, { serviceToken: [] }]
        : isTokenEndpoint(route)
          ? [{ clientBasic: [] }, {}]
          : [],
      "x-required-scope": route.scope,
      parameters: [
        ...pathParameters(route, toSchema),
        ...(route.query ? queryParameters(route.query, toSchema) : []),
        ...(acceptsIdempotencyKey(route)
          ? [{ $ref: "#/components/parameters/IdempotencyKey" }]
          : []),
      ],
      ...(route.body
        ? {
            requestBody: {
              required: bodyRequired(route),
              content: {
                [route.bodyMediaType ?? "application/json"]: {
                  schema: namedBody(route, toSchema(route.body, "input"), components),
                  ...(route.examples?.request !== undefined
                    ? { example: route.examples.request }
                    : {}),
                },
              },
            },
          }
        : {}),
      responses: byStatus({
        [String(success.status)]: {
          description: success.description,
          headers: responseHeader(
            successHeaders,
            acceptsIdempotencyKey(route) ? ["Idempotent-Replayed"] : [],
          ),
          ...(success.schema
            ? {
                content: {
                  [success.mediaType ?? "application/json"]: {
                    schema: toSchema(success.schema, "output"),
                    ...(route.examples?.response !== undefined
                      ? { example: route.examples.response }
                      : {}),
                  },
                },
              }
            : {}),
        },
        ...(isTokenEndpoint(route)
          ? withOAuthErrors(
              problemResponses(
                [...commonProblems(route), ...route.problems],
                false,
                problemContext,
              ),
              commonHeaders,
            )
          : problemResponses(
              [...commonProblems(route), ...route.problems],
              acceptsIdempotencyKey(route),
              problemContext,
            )),
      }),
    };
    const path = documentPath(route.path);
    paths[path] = { ...(paths[path] ?? {}), [route.method]: operation };
  }
  const webhooks = webhooksSection(toSchema);
  const document = {
    openapi: "3.1.0",
    info: {
      title: "Switchboard API",
      version: options.version,
      summary: "Telephony and messaging over HTTP.",
      description: [
        gettingStarted(options.publicUrl, scopes),
        "## Conventions",
        "The API's paths carry their version (/v1, canonical); each is also served unversioned (by v1). OAuth and discovery live at the root. Every reply carries API-Version, X-Request-Id and the rate-limit headers; every error is RFC 9457 problem+json.",
        "Rate limits: token buckets shared by every gateway replica. An authenticated request counts against the bucket of (its account, the operation's permission), after authentication. Public operations, and every request answered before an operation runs (401/403 from authentication, unknown path, 405, unsupported version, an unparsable body), count against the bucket `public` of the client address (IPv6: its /64). X-RateLimit-Resource names the bucket. An empty bucket answers 429 rate-limited with Retry-After, and the request is not executed.",
        "Idempotency: unsafe operations that need a permission honour Idempotency-Key (see the parameter).",
      ].join("\n\n"),
      license: { name: "Apache-2.0", identifier: "Apache-2.0" },
    },
    // x-internal: false — the API is for the public (OWASP API9: every server states its audience).
    servers: [{ url: options.publicUrl, description: "the gateway", "x-internal": false }],
    tags: [...new Set(routes.map((r) => r.tag))].map((name) => ({
      name,
      description: tagDescriptions[name] ?? `${name} operations.`,
    })),
    paths,
    webhooks,
    components: {
      schemas: {
        ...components,
        ...(routes.some(isTokenEndpoint) ? { OAuthError: oauthErrorSchema } : {}),
      },
      headers: {} as Record<string, unknown>,
      parameters: {
        IdempotencyKey: {
          name: "Idempotency-Key",
          in: "header",
          required: false,
          description:
            "1–255 of A-Z a-z 0-9 _ : . - (an RFC 8941 quoted string is accepted). Scoped to the account and honoured for 24 hours from first use: a retry by the same credential with the same key, method, path and body replays the stored response (2xx and the operation's 4xx) with Idempotent-Replayed: true; the same key with another body, or from another client or service token of the account, is 409 idempotency-mismatch (a creation's secret is replayed only to its creator); while the first request still runs a retry waits up to 10 s, then 409 idempotency-in-progress whose Retry-After is the seconds until the key frees should the first request have been lost (its lease, 60 s by default, runs out).",
          schema: {
            type: "string",
            pattern: '^(?:[A-Za-z0-9_:.-]{1,255}|"[A-Za-z0-9_:.-]{1,255}")$',
            maxLength: 257,
          },
        },
      },
      securitySchemes: {
        oauth2: {
          type: "oauth2",
          description:
            "OAuth 2.1 client credentials; EdDSA at+jwt access tokens (RFC 9068) issued and checked as RFC8725 (JWT Best Current Practices) asks: one algorithm, explicit typ, issuer, audience and expiry verified.",
          flows: {
            clientCredentials: {
              tokenUrl: `${options.publicUrl}/oauth/token`,
              scopes: Object.fromEntries(scopes.map((s) => [s, `Permission ${s}`])),
            },
          },
        },
        clientBasic: {
          type: "http",
          scheme: "basic",
          description:
            "OAuth client authentication at the token endpoint (client_secret_basic): client id and secret, form-urlencoded. client_secret_post (both in the body) is accepted too.",
        },
        serviceToken: {
          type: "http",
          scheme: "bearer",
          description: "Platform service token (sbt_…), carrying an account and scopes.",
        },
      },
    },
  };
  document.components.headers = headerComponents(document);
  return withCodeSamples(withExamples(clientFriendly(document)), routes);
}

type SampledOperation = Operation & {
  operationId: string;
  security: unknown[];
  parameters: { name?: string; in?: string; $ref?: string }[];
  "x-codeSamples"?: unknown;
};

/** Every operation's curl and SDK samples (code-samples.ts), from its examples. */
function withCodeSamples<T>(document: T, routes: RouteSpec[]): T {
  const byId = new Map(routes.map((route) => [route.operationId, route]));
  const paths = (document as { paths: Record<string, Record<string, SampledOperation>> }).paths;
  for (const [path, item] of Object.entries(paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const route = byId.get(operation.operationId);
      const body = Object.entries(operation.requestBody?.content ?? {})[0];
      const success = Object.entries(operation.responses).find(([status]) =>
        status.startsWith("2"),
      )?.[1];
      const [mediaType, media] = Object.entries(success?.content ?? {})[0] ?? [];
      const ref = (media?.schema as { $ref?: string } | undefined)?.$ref;
      operation["x-codeSamples"] = codeSamples({
        method,
        path,
        parameters: operation.parameters,
        body: body ? { mediaType: body[0], example: body[1].example } : undefined,
        query: route?.examples?.query ?? (route?.paginated ? { limit: 10 } : undefined),
        authenticated: Boolean(route?.scope),
        success: { mediaType, component: ref?.split("/").pop() },
      });
    }
  }
  return document;
}

type Media = { schema?: unknown; example?: unknown };
type Operation = {
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
};

/**
 * Every operation shows an example request body and success response: the route table's own
 * (`examples`), else one sampled from the schema (openapi-sampler, deterministic).
 */
function withExamples<T>(document: T): T {
  const paths = (document as { paths: Record<string, Record<string, Operation>> }).paths;
  const fill = (content: Record<string, Media> | undefined) => {
    for (const media of Object.values(content ?? {})) {
      if (media.example !== undefined || media.schema === undefined) continue;
      media.example = sample(
        media.schema as never,
        { skipReadOnly: true, quiet: true, enablePatterns: true },
        document as object,
      );
    }
  };
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      fill(operation.requestBody?.content);
      const success = Object.keys(operation.responses).find((status) => status.startsWith("2"));
      if (success) fill(operation.responses[success]?.content);
    }
  }
  return document;
}

/** The API's own paths carry /v1 (canonical); OAuth and discovery stay at the root. */
const documentPath = (path: string) =>
  /^\/(api|admin|errors|openapi\.json)/.test(path) ? `/v1${path}` : path;

/**
 * A body is required unless the operation accepts it absent (an action whose fields all have
 * defaults, such as assigning a hold). A PATCH always states its patch, even `{}`.
 */
const bodyRequired = (route: RouteSpec) =>
  route.method === "patch" ||
  route.bodyMediaType === "application/x-www-form-urlencoded" ||
  !(route.body?.safeParse({}).success ?? true);

const pascal = (id: string) => id.charAt(0).toUpperCase() + id.slice(1);

/** Every request body is a named component (`<OperationId>Request`), for generated clients. */
function namedBody(route: RouteSpec, schema: JsonSchema, components: Record<string, JsonSchema>) {
  if (typeof schema.$ref === "string") return schema;
  const name = `${pascal(route.operationId)}Request`;
  components[name] = schema;
  return { $ref: `#/components/schemas/${name}` };
}

/**
 * What generated clients need: integers say their format (int32 within its range, else int64),
 * and responses do not forbid members, since the contract only ever adds fields (a strict
 * client would break on the first new one). Request schemas keep refusing unknown members.
 */
function clientFriendly<T>(document: T): T {
  const walk = (value: unknown, inResponse: boolean): unknown => {
    if (Array.isArray(value)) return value.map((item) => walk(item, inResponse));
    if (value === null || typeof value !== "object") return value;
    const object = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(object)) {
      if (key === "additionalProperties" && inner === false && inResponse) continue;
      out[key] = walk(inner, inResponse || key === "responses");
    }
    if (out.type === "integer") {
      // zod's .int() bounds every integer by ±(2^53 − 1): noise beside format int64.
      if (out.maximum === Number.MAX_SAFE_INTEGER) delete out.maximum;
      if (out.minimum === Number.MIN_SAFE_INTEGER) delete out.minimum;
    }
    if (out.type === "integer" && out.format === undefined) {
      const within = (n: unknown) => typeof n === "number" && Math.abs(n) <= 2_147_483_647;
      out.format = within(out.maximum) && within(out.minimum ?? 0) ? "int32" : "int64";
    }
    return out;
  };
  const walked = walk(document, false) as Record<string, unknown> & {
    components: { schemas: Record<string, unknown> };
  };
  // Components: response ones (not *Input, not *Request) accept members they do not name.
  for (const [name, schema] of Object.entries(walked.components.schemas)) {
    if (!/(Input|Request)$/.test(name)) walked.components.schemas[name] = walk(schema, true);
  }
  return walked as T;
}
