import { z } from "zod";

export const healthResponse = z
  .object({
    status: z.enum(["pass", "warn", "fail"]),
    version: z.string(),
    checks: z.record(z.string(), z.enum(["pass", "warn", "fail"])),
  })
  .meta({ id: "Health" });

export const errorKindDoc = z
  .object({
    type: z.string(),
    kind: z.string(),
    code: z.string(),
    status: z.number().int(),
    title: z.string(),
  })
  .meta({ id: "ErrorKind" });

export const tokenRequest = z
  .object({
    grant_type: z.literal("client_credentials").describe("The only grant: client_credentials"),
    scope: z.string().optional(),
    client_id: z.string().optional(),
    client_secret: z.string().optional(),
  })
  .meta({ id: "TokenRequest" });

export const tokenResponse = z
  .object({
    access_token: z.string(),
    token_type: z.literal("Bearer"),
    expires_in: z.number().int(),
    scope: z.string(),
  })
  .meta({ id: "TokenResponse" });

export const jwks = z
  .object({ keys: z.array(z.record(z.string(), z.unknown())) })
  .meta({ id: "JsonWebKeySet" });

export const openApiDocument = z.record(z.string(), z.unknown());

/** RFC 8414 metadata (members beyond these may be added). */
export const authorizationServerMetadata = z
  .object({
    issuer: z.string(),
    token_endpoint: z.string(),
    jwks_uri: z.string(),
    grant_types_supported: z.array(z.string()),
    token_endpoint_auth_methods_supported: z.array(z.string()),
    scopes_supported: z.array(z.string()),
    response_types_supported: z.array(z.string()),
  })
  .meta({ id: "AuthorizationServerMetadata" });
