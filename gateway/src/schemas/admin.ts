import { wire } from "@switchboard/proto";
import { z } from "zod";
import { MAX_TOKEN_LIFETIME_SECONDS } from "../admin/validation.js";
import { scopes } from "../auth/scopes.js";
import { idParam, page, resourceId, text, timestamp } from "./common.js";
import { story } from "./story.js";

/** Administration (docs/api.md "Administration"): accounts, clients, service tokens, keys. */
export const clientExample = {
  client_id: story.clientId,
  account_id: story.account,
  name: "Support desk",
  scopes: ["calls:read", "calls:write"],
  created_at: story.createdAt,
  disabled_at: null,
};
const clientSecret = "sbcs_4q9Xw2vN7mK1pR8tY3zL6bH0cF5jD2sA";
export const serviceTokenExample = {
  id: story.tokenId,
  account_id: story.account,
  name: "nightly export",
  display_hint: "sbt_…x7Qa",
  scopes: ["usage:read"],
  expires_at: "2027-11-24T21:45:44.123Z",
  revoked_at: null,
  created_at: story.createdAt,
};
const serviceTokenSecret = "sbt_Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1ub3x7Qa";
const accountId = text("The account's id (acct_…)", story.account);
const scopeList = z
  .array(z.string().meta({ examples: ["calls:write"] }))
  .describe("Permissions, e.g. numbers:read");
const optionalName = (example: string) =>
  z
    .string()
    .max(200)
    .optional()
    .describe("A name for people")
    .meta({ examples: [example] });
const keyPurpose = z
  .string()
  .max(64)
  .describe("What the key signs: access-token (the access tokens this gateway issues)")
  .meta({ examples: ["access-token"] });
/**
 * Scopes a request names: unknown names are refused (422, by checkScopes, which reports them
 * by name), so the enum only documents it; repeats are accepted and merged, up to 64 entries.
 */
const requestedScopes = z
  .array(z.string().meta({ enum: [...scopes] }))
  .max(64)
  .describe("Permissions, e.g. numbers:read");

export const account = z
  .object({
    id: accountId,
    name: text("A name for people", "Acme Clinic"),
    created_at: timestamp.describe("When the account was created"),
  })
  .meta({ id: "Account" });
export const accountCreate = z
  .object({
    name: z
      .string()
      .min(1)
      .max(200)
      .describe("A name for people, 1–200 characters")
      .meta({ examples: ["Acme Clinic"] }),
  })
  .strict()
  .meta({ id: "AccountCreate" });
export const accountsPage = page(account).meta({ id: "AccountPage" });
// maxLength documents what each pattern enforces.
export const accountParams = z.object({
  account_id: z
    .string()
    .regex(/^acct_[a-z0-9_-]{1,64}$/)
    .meta({ maxLength: 69, examples: [story.account] })
    .describe("The account's id (acct_…)"),
});

export const client = z
  .object({
    client_id: text("The OAuth client id", story.clientId),
    account_id: accountId,
    name: text("A name for people", "Support desk"),
    scopes: scopeList,
    created_at: timestamp.describe("When the client was created"),
    disabled_at: timestamp.nullable().describe("When it was disabled; null while it works"),
  })
  .meta({ id: "Client", examples: [clientExample] });
export const clientWithSecret = client
  .extend({
    client_secret: text("Shown once: store it now (only a hash is kept)", clientSecret),
  })
  .meta({ id: "ClientWithSecret", examples: [{ ...clientExample, client_secret: clientSecret }] });
export const clientCreate = z
  .object({
    name: optionalName("Support desk"),
    scopes: requestedScopes.optional(),
  })
  .strict()
  .meta({ id: "ClientCreate" });
export const clientsPage = page(client).meta({ id: "ClientPage" });
export const clientParams = z.object({
  client_id: z
    .string()
    .regex(/^[!-~]{1,255}$/)
    .meta({ maxLength: 255, examples: [story.clientId] })
    .describe("The OAuth client id"),
});

export const serviceToken = z
  .object({
    id: resourceId("tok"),
    account_id: accountId,
    name: text("A name for people", "nightly export"),
    display_hint: text("The token's last characters, to tell tokens apart", "sbt_…x7Qa"),
    scopes: scopeList,
    expires_at: timestamp.nullable().describe("When it stops working; null: never"),
    revoked_at: timestamp.nullable().describe("When it was revoked; null while it works"),
    created_at: timestamp.describe("When it was created"),
  })
  .meta({ id: "ServiceToken", examples: [serviceTokenExample] });
export const serviceTokenWithSecret = serviceToken
  .extend({
    token: text("sbt_…, shown once: store it now (only a hash is kept)", serviceTokenSecret),
  })
  .meta({
    id: "ServiceTokenWithSecret",
    examples: [{ ...serviceTokenExample, token: serviceTokenSecret }],
  });
export const serviceTokenCreate = z
  .object({
    name: optionalName("nightly export"),
    scopes: requestedScopes,
    expires_in: z
      .number()
      .int()
      // The service checks the range (422 at #/expires_in); the schema states it.
      .meta({ minimum: 1, maximum: MAX_TOKEN_LIFETIME_SECONDS })
      .optional()
      .describe(`Seconds, 1–${MAX_TOKEN_LIFETIME_SECONDS}; none: the token does not expire`)
      .meta({ examples: [31_536_000] }),
  })
  .strict()
  .meta({ id: "ServiceTokenCreate" });
export const serviceTokensPage = page(serviceToken).meta({ id: "ServiceTokenPage" });
export const serviceTokenParams = idParam("tok", "token_id");

export const signingKey = z
  .object({
    kid: text("The key id, as in /.well-known/jwks.json", "key_01jd2k8w7c3q9v0m5n6p7r8s9t"),
    purpose: keyPurpose,
    alg: text("The signature algorithm", "EdDSA"),
    status: z
      .enum(wire.keyStatus.values)
      .describe("active signs; retired only verifies what it signed"),
    created_at: timestamp.describe("When the key was made"),
    retired_at: timestamp.nullable().describe("When a newer key replaced it; null while active"),
  })
  .meta({
    id: "SigningKey",
    examples: [
      {
        kid: "key_01jd2k8w7c3q9v0m5n6p7r8s9t",
        purpose: "access-token",
        alg: "EdDSA",
        status: "active",
        created_at: story.createdAt,
        retired_at: null,
      },
    ],
  });
export const signingKeysPage = page(signingKey).meta({ id: "SigningKeyPage" });
export const keysQuery = z
  .object({ purpose: keyPurpose.optional().describe("Only the keys of this purpose") })
  .strict();
export const keyRotate = z
  .object({ purpose: keyPurpose.default("access-token") })
  .strict()
  .meta({ id: "KeyRotate" });
