import { z } from "zod";
import { DomainError, isProblemKind, problemKinds } from "@switchboard/kit";
import type { Identity, PublicJwk } from "../auth/index.js";
import { httpProblem, problemCode, problemType } from "../http/problem.js";
import {
  authorizationServerMetadata,
  errorKindDoc,
  healthResponse,
  jwks,
  openApiDocument,
  tokenRequest,
  tokenResponse,
} from "../schemas/meta.js";
import type { HealthReporter } from "../health.js";
import { clientAddress } from "../policies/client-address.js";
import { ok } from "./replies.js";
import { defineRoute, type RouteSpec } from "../http/route-spec.js";

export interface MetaDeps {
  identity: Identity;
  health: HealthReporter;
  errorsUrl: string;
  openApi: () => unknown;
  /**
   * More verification keys for the JWKS beside the gateway's own (e.g. the usage service's
   * record-signing keys). A source that fails contributes nothing; the document is still served.
   */
  keySources?: (() => Promise<PublicJwk[]>)[];
}

/** The gateway's keys, then each source's, first occurrence of a kid winning. */
async function jwksDocument(deps: MetaDeps): Promise<{ keys: PublicJwk[] }> {
  const own = await deps.identity.jwks();
  const extra = await Promise.all(
    (deps.keySources ?? []).map((source) => source().catch(() => [])),
  );
  const seen = new Set<string>();
  const keys = [...own.keys, ...extra.flat()].filter(
    (key) => !seen.has(key.kid) && seen.add(key.kid),
  );
  return { keys };
}

/** The public routes: health, discovery, the token endpoint, the OpenAPI document, error docs. */
export function metaRoutes(deps: MetaDeps): RouteSpec[] {
  return [
    defineRoute({
      method: "get",
      path: "/api/health",
      operationId: "getHealth",
      summary: "Platform health",
      description: "Redacted: component states only. 503 only while the gateway shuts down.",
      tag: "Platform",
      scope: null,
      answersWithoutRecord: true,
      success: {
        status: 200,
        description: "pass or warn",
        schema: healthResponse,
        mediaType: "application/health+json",
      },
      problems: [],
      handler: async () => {
        const report = await deps.health.report();
        return {
          status: report.status === "fail" ? 503 : 200,
          body: report,
          mediaType: "application/health+json",
        };
      },
    }),
    defineRoute({
      method: "get",
      path: "/openapi.json",
      operationId: "getOpenApiDocument",
      summary: "This OpenAPI 3.1 document",
      description:
        "This document, built from the gateway's route table: every operation with its parameters, bodies, responses, problem kinds (`x-problem-kinds`) and examples. Public: no token needed.",
      tag: "Platform",
      scope: null,
      success: { status: 200, description: "The OpenAPI document", schema: openApiDocument },
      problems: [],
      examples: {
        response: {
          openapi: "3.1.0",
          info: { title: "Switchboard API", version: "0.1.0" },
          servers: [{ url: "http://localhost:8080" }],
          paths: {},
        },
      },
      handler: async () => ok(deps.openApi()),
    }),
    defineRoute({
      method: "get",
      path: "/errors/{kind}",
      operationId: "getErrorKind",
      summary: "Documentation of one problem kind",
      description:
        "The title, HTTP status and meaning of one problem kind, the last segment of a problem's `type` (e.g. `number-unavailable`). Public; an unknown kind is 404.",
      tag: "Platform",
      scope: null,
      // An unknown kind is 404; the enum tells a client which exist.
      params: z.object({ kind: z.string().meta({ enum: [...problemKinds] }) }),
      success: { status: 200, description: "The problem kind", schema: errorKindDoc },
      problems: ["not-found"],
      handler: async (ctx) => {
        const { kind } = ctx.params;
        if (!isProblemKind(kind))
          throw new DomainError("not-found", `no problem kind named ${kind}`);
        const { status, title } = httpProblem(kind);
        return ok({
          type: problemType(deps.errorsUrl, kind),
          kind,
          code: problemCode(kind),
          status,
          title,
        });
      },
    }),
    defineRoute({
      method: "post",
      path: "/oauth/token",
      operationId: "issueToken",
      examples: {
        request: { grant_type: "client_credentials", scope: "numbers:read numbers:write" },
        response: {
          access_token: "eyJhbGciOiJFZERTQSIsInR5cCI6ImF0K2p3dCJ9…",
          token_type: "Bearer",
          expires_in: 900,
          scope: "numbers:read numbers:write",
        },
      },
      summary: "OAuth 2.1 client credentials token endpoint",
      description:
        "client_secret_basic or client_secret_post. Errors follow RFC 6749 §5.2 ({error, error_description}), not problem+json; a client id locked for the requesting address after repeated failures from it is invalid_client with Retry-After (other addresses are not locked). Past the cap on concurrent secret hashing, or past the requesting address's share of the queue: 503 service-unavailable (problem+json) with Retry-After.",
      tag: "Identity",
      scope: null,
      body: tokenRequest,
      bodyMediaType: "application/x-www-form-urlencoded",
      handlerValidatesBody: true,
      success: {
        status: 200,
        description: "An access token",
        schema: tokenResponse,
        headers: ["Cache-Control"],
      },
      problems: ["service-unavailable"],
      handler: async (ctx) => {
        const result = await deps.identity.tokenEndpoint({
          authorization: ctx.req.headers.authorization,
          contentType: ctx.req.headers["content-type"],
          form: (ctx.req.body ?? {}) as Record<string, string | string[] | undefined>,
          source: clientAddress(ctx.req),
        });
        return { status: result.status, headers: result.headers, body: result.body };
      },
    }),
    defineRoute({
      method: "get",
      path: "/.well-known/jwks.json",
      operationId: "getJwks",
      summary: "Public keys for access tokens, usage records and templates",
      description:
        "The platform's public keys as a JSON Web Key Set, by `kid`: they verify access tokens, the signatures of usage records and of message templates. Public, and cacheable for 5 minutes.",
      tag: "Identity",
      scope: null,
      success: { status: 200, description: "JSON Web Key Set", schema: jwks },
      problems: [],
      examples: {
        response: {
          keys: [
            {
              kty: "OKP",
              crv: "Ed25519",
              x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
              kid: "key_01jd2k8w7c3q9v0m5n6p7r8s9t",
              alg: "EdDSA",
              use: "sig",
            },
          ],
        },
      },
      handler: async () => ({
        ...ok(await jwksDocument(deps)),
        headers: { "Cache-Control": "public, max-age=300" },
      }),
    }),
    defineRoute({
      method: "get",
      path: "/.well-known/oauth-authorization-server",
      operationId: "getAuthorizationServerMetadata",
      summary: "RFC 8414 authorization server metadata",
      description:
        "Where and how to get a token: issuer, token endpoint, JWKS URI, the grant (client_credentials), client authentication methods and scopes. Public.",
      tag: "Identity",
      scope: null,
      success: { status: 200, description: "Metadata", schema: authorizationServerMetadata },
      problems: [],
      examples: {
        response: {
          issuer: "http://localhost:8080",
          token_endpoint: "http://localhost:8080/oauth/token",
          jwks_uri: "http://localhost:8080/.well-known/jwks.json",
          grant_types_supported: ["client_credentials"],
          token_endpoint_auth_methods_supported: ["client_secret_basic", "client_secret_post"],
          scopes_supported: ["numbers:read", "numbers:write"],
          response_types_supported: [],
        },
      },
      handler: async () => ok(deps.identity.authorizationServerMetadata()),
    }),
  ];
}
