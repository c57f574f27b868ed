import { wire } from "@switchboard/proto";
import { z } from "zod";
import { MAX_TOKEN_LIFETIME_SECONDS } from "../admin/validation.js";
import { scopes } from "../auth/scopes.js";
import { idParam, page, resourceId, timestamp } from "./common.js";

/** Administration (docs/api.md "Administration"): accounts, clients, service tokens, keys. */
const accountId = z.string().describe("acct_…");
const scopeList = z.array(z.string()).describe("Permissions, e.g. numbers:read");
/**
 * Scopes a request names: unknown names are refused (422, by checkScopes, which reports them
 * by name), so the enum only documents it; repeats are accepted and merged, up to 64 entries.
 */
const requestedScopes = z
  .array(z.string().meta({ enum: [...scopes] }))
  .max(64)
  .describe("Permissions, e.g. numbers:read");

export const account = z
  .object({ id: accountId, name: z.string(), created_at: timestamp })
  .meta({ id: "Account" });
export const accountCreate = z
  .object({ name: z.string().min(1).max(200) })
  .strict()
  .meta({ id: "AccountCreate" });
export const accountsPage = page(account).meta({ id: "AccountPage" });
// maxLength documents what each pattern enforces.
export const accountParams = z.object({
  account_id: z
    .string()
    .regex(/^acct_[a-z0-9_-]{1,64}$/)
    .meta({ maxLength: 69 }),
});

export const client = z
  .object({
    client_id: z.string(),
    account_id: accountId,
    name: z.string(),
    scopes: scopeList,
    created_at: timestamp,
    disabled_at: timestamp.nullable(),
  })
  .meta({ id: "Client" });
export const clientWithSecret = client
  .extend({ client_secret: z.string().describe("Shown once") })
  .meta({ id: "ClientWithSecret" });
export const clientCreate = z
  .object({ name: z.string().max(200).optional(), scopes: requestedScopes.optional() })
  .strict()
  .meta({ id: "ClientCreate" });
export const clientsPage = page(client).meta({ id: "ClientPage" });
export const clientParams = z.object({
  client_id: z
    .string()
    .regex(/^[!-~]{1,255}$/)
    .meta({ maxLength: 255 }),
});

export const serviceToken = z
  .object({
    id: resourceId("tok"),
    account_id: accountId,
    name: z.string(),
    display_hint: z.string(),
    scopes: scopeList,
    expires_at: timestamp.nullable(),
    revoked_at: timestamp.nullable(),
    created_at: timestamp,
  })
  .meta({ id: "ServiceToken" });
export const serviceTokenWithSecret = serviceToken
  .extend({ token: z.string().describe("sbt_…, shown once") })
  .meta({ id: "ServiceTokenWithSecret" });
export const serviceTokenCreate = z
  .object({
    name: z.string().max(200).optional(),
    scopes: requestedScopes,
    expires_in: z
      .number()
      .int()
      // The service checks the range (422 at #/expires_in); the schema states it.
      .meta({ minimum: 1, maximum: MAX_TOKEN_LIFETIME_SECONDS })
      .optional()
      .describe(`Seconds, 1–${MAX_TOKEN_LIFETIME_SECONDS}; none: the token does not expire`),
  })
  .strict()
  .meta({ id: "ServiceTokenCreate" });
export const serviceTokensPage = page(serviceToken).meta({ id: "ServiceTokenPage" });
export const serviceTokenParams = idParam("tok", "token_id");

export const signingKey = z
  .object({
    kid: z.string(),
    purpose: z.string(),
    alg: z.string(),
    status: z.enum(wire.keyStatus.values),
    created_at: timestamp,
    retired_at: timestamp.nullable(),
  })
  .meta({ id: "SigningKey" });
export const signingKeysPage = page(signingKey).meta({ id: "SigningKeyPage" });
export const keysQuery = z.object({ purpose: z.string().max(64).optional() }).strict();
export const keyRotate = z
  .object({ purpose: z.string().max(64).default("access-token") })
  .strict()
  .meta({ id: "KeyRotate" });
