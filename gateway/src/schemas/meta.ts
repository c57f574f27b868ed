import { z } from "zod";
import { text } from "./common.js";

export const healthResponse = z
  .object({
    status: z
      .enum(["pass", "warn", "fail"])
      .describe("pass: every component passes; warn: one is degraded (the API still answers)"),
    version: text("The platform's version", "0.1.0"),
    checks: z
      .record(z.string(), z.enum(["pass", "warn", "fail"]))
      .describe("Each component (database, inventory, call-control…) and its state"),
  })
  .meta({
    id: "Health",
    examples: [
      {
        status: "pass",
        version: "0.1.0",
        checks: {
          database: "pass",
          inventory: "pass",
          "call-control": "pass",
          messaging: "pass",
          usage: "pass",
          webhook: "pass",
        },
      },
    ],
  });

export const errorKindDoc = z
  .object({
    type: text(
      "The kind's URL: the `type` of its problems",
      "https://api.switchboard.test/v1/errors/rate-limited",
    ),
    kind: text("The kind's name", "rate-limited"),
    code: text("The kind in SCREAMING_SNAKE case: the `code` of its problems", "RATE_LIMITED"),
    status: z.number().int().describe("The HTTP status its problems have"),
    title: text("The fixed title of its problems", "Too many requests"),
  })
  .meta({
    id: "ErrorKind",
    examples: [
      {
        type: "https://api.switchboard.test/v1/errors/rate-limited",
        kind: "rate-limited",
        code: "RATE_LIMITED",
        status: 429,
        title: "Too many requests",
      },
    ],
  });

export const tokenRequest = z
  .object({
    grant_type: z.literal("client_credentials").describe("The only grant: client_credentials"),
    scope: z
      .string()
      .optional()
      .describe("Space-separated permissions, a subset of the client's; all of them when omitted")
      .meta({ examples: ["calls:read calls:write"] }),
    client_id: z
      .string()
      .optional()
      .describe("client_secret_post: the client id (else HTTP Basic)")
      .meta({ examples: ["cli_support_desk"] }),
    client_secret: z
      .string()
      .optional()
      .describe("client_secret_post: the client secret (else HTTP Basic)")
      .meta({ examples: ["sbcs_4q9Xw2vN7mK1pR8tY3zL6bH0cF5jD2sA"] }),
  })
  .meta({ id: "TokenRequest" });

export const tokenResponse = z
  .object({
    access_token: text(
      "An EdDSA JWT (RFC 9068, typ at+jwt): send it as Authorization: Bearer <token>",
      "eyJhbGciOiJFZERTQSIsInR5cCI6ImF0K2p3dCIsImtpZCI6ImtleV8wMWpkMmsifQ.eyJpc3MiOiJodHRwczovL2FwaS5zd2l0Y2hib2FyZC50ZXN0Iiwic3ViIjoiY2xpX3N1cHBvcnRfZGVzayIsInNjb3BlIjoiY2FsbHM6cmVhZCBjYWxsczp3cml0ZSJ9.c2lnbmF0dXJl",
    ),
    token_type: z.literal("Bearer").describe("Always Bearer"),
    expires_in: z.number().int().describe("Seconds the token is valid for"),
    scope: text("The permissions the token carries, space-separated", "calls:read calls:write"),
  })
  .meta({ id: "TokenResponse" });

export const jwks = z
  .object({
    keys: z
      .array(z.record(z.string(), z.unknown()))
      .describe("Public keys (OKP Ed25519) by kid: access tokens, usage records, templates"),
  })
  .meta({ id: "JsonWebKeySet" });

export const openApiDocument = z.record(z.string(), z.unknown());

/** RFC 8414 metadata (members beyond these may be added). */
export const authorizationServerMetadata = z
  .object({
    issuer: text("The `iss` of every access token: the public URL", "https://api.switchboard.test"),
    token_endpoint: text("Where tokens are issued", "https://api.switchboard.test/oauth/token"),
    jwks_uri: text(
      "The keys that verify the tokens",
      "https://api.switchboard.test/.well-known/jwks.json",
    ),
    grant_types_supported: z.array(z.string()).describe("client_credentials"),
    token_endpoint_auth_methods_supported: z
      .array(z.string())
      .describe("client_secret_basic and client_secret_post"),
    scopes_supported: z.array(z.string()).describe("Every permission a token may carry"),
    response_types_supported: z
      .array(z.string())
      .describe("Empty: no authorization endpoint (client credentials only)"),
  })
  .meta({ id: "AuthorizationServerMetadata" });
