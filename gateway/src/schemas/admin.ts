import { wire } from "@switchboard/proto";
import { z } from "zod";
import { page, resourceId, timestamp } from "./common.js";

/** Administration (docs/api.md "Administration"): accounts, clients, service tokens, keys. */
const accountId = z.string().describe("acct_…");
const scopeList = z.array(z.string()).describe("Permissions, e.g. numbers:read");

export const account = z
  .object({ id: accountId, name: z.string(), created_at: timestamp })
  .meta({ id: "Account" });
export const accountCreate = z
  .object({ name: z.string().min(1).max(200) })
  .strict()
  .meta({ id: "AccountCreate" });
export const accountsPage = page(account).meta({ id: "AccountPage" });
export const accountParams = z.object({ account_id: z.string().regex(/^acct_[a-z0-9_-]{1,64}$/) });

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
  .object({ name: z.string().max(200).optional(), scopes: scopeList.optional() })
  .strict()
  .meta({ id: "ClientCreate" });
export const clientsPage = page(client).meta({ id: "ClientPage" });
export const clientParams = z.object({ client_id: z.string().regex(/^[!-~]{1,255}$/) });

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
    scopes: scopeList,
    expires_in: z.number().int().optional().describe("Seconds; none: the token does not expire"),
  })
  .strict()
  .meta({ id: "ServiceTokenCreate" });
export const serviceTokensPage = page(serviceToken).meta({ id: "ServiceTokenPage" });
export const serviceTokenParams = z.object({ token_id: z.string().regex(/^tok_[0-9a-z]{26}$/) });

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
