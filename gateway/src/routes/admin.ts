import type { z } from "zod";
import { DomainError, type Pool } from "@switchboard/kit";
import {
  Checks,
  checkAdminGrant,
  createAccount,
  createClient,
  createServiceToken,
  disableClient,
  getAccount,
  listAccounts,
  listClients,
  listServiceTokens,
  listSigningKeys,
  revokeServiceToken,
  rotateClientSecret,
  rotateSigningKey,
} from "../admin/index.js";
import type { Principal, SigningKeyStore } from "../auth/index.js";
import {
  clientExample,
  serviceTokenExample,
  account,
  accountCreate,
  accountParams,
  accountsPage,
  client,
  clientCreate,
  clientParams,
  clientsPage,
  clientWithSecret,
  keyRotate,
  keysQuery,
  serviceToken,
  serviceTokenCreate,
  serviceTokenParams,
  serviceTokensPage,
  serviceTokenWithSecret,
  signingKey,
  signingKeysPage,
} from "../schemas/admin.js";
import { created, ok } from "./replies.js";
import { defineRoute, type RouteSpec, type ScopedRoute } from "../http/route-spec.js";
import { accountView, clientView, keyView, tokenView } from "./views/admin.js";

export interface AdminDeps {
  pool: Pool;
  keys: SigningKeyStore;
  /** The platform's own account (BOOTSTRAP_ACCOUNT): the only one whose credentials administer. */
  platformAccount: string;
}

/** A route of the administration API: tag Administration, scope `admin`. */
const adminRoute = <Path extends string, Q extends z.ZodType, B extends z.ZodType>(
  route: Omit<ScopedRoute<Path, Q, B>, "tag" | "scope">,
): RouteSpec => defineRoute({ tag: "Administration", scope: "admin", ...route });

/** Admin listings are short: every item in one page. */
const onePage = <T>(data: T[]) => ok({ data, next_cursor: null, has_more: false });

/**
 * The administration API (docs/api.md "Administration"): the CLI's operations over HTTP, scope
 * `admin`, for credentials of the platform's own account only.
 */
export function adminRoutes(deps: AdminDeps): RouteSpec[] {
  const { pool } = deps;
  const platformOnly = (principal: Principal): void => {
    if (principal.accountId !== deps.platformAccount) {
      throw new DomainError(
        "insufficient-scope",
        "administration is for credentials of the platform's own account",
        { extensions: { required_scope: "admin" } },
      );
    }
  };
  const adminOnlyForPlatform = (accountId: string, scopes: readonly string[] | undefined) => {
    const checks = new Checks();
    checkAdminGrant(checks, { accountId, scopes, adminAccount: deps.platformAccount });
    checks.done();
  };

  return [
    adminRoute({
      method: "post",
      path: "/admin/accounts",
      operationId: "createAccount",
      summary: "Create an account",
      description:
        "A new account (`acct_…`): numbers, calls, messages and credentials all belong to one. Give it an OAuth client or a service token next.",
      body: accountCreate,
      success: { status: 201, description: "The account", schema: account, headers: ["Location"] },
      problems: ["validation-failed", "conflict"],
      handler: async (ctx) => {
        platformOnly(ctx.principal);
        const made = await createAccount(pool, { name: ctx.body.name });
        return created(`/v1/admin/accounts/${made.id}`, accountView(made));
      },
    }),
    adminRoute({
      method: "get",
      path: "/admin/accounts",
      operationId: "listAccounts",
      summary: "List accounts",
      description: "Every account on the platform, a page at a time.",
      success: { status: 200, description: "Every account", schema: accountsPage },
      problems: [],
      handler: async (ctx) => {
        platformOnly(ctx.principal);
        return onePage((await listAccounts(pool)).map(accountView));
      },
    }),
    adminRoute({
      method: "get",
      path: "/admin/accounts/{account_id}",
      operationId: "getAccount",
      summary: "Get an account",
      description: "One account by id; 404 when there is none.",
      params: accountParams,
      success: { status: 200, description: "The account", schema: account },
      problems: ["not-found"],
      handler: async (ctx) => {
        platformOnly(ctx.principal);
        return ok(accountView(await getAccount(pool, ctx.params.account_id)));
      },
    }),
    adminRoute({
      method: "post",
      path: "/admin/accounts/{account_id}/clients",
      operationId: "createClient",
      summary: "Create an OAuth client of an account",
      description:
        "Scopes default to every scope but admin, which only the platform's own account may hold. The secret is shown once.",
      params: accountParams,
      body: clientCreate,
      success: {
        status: 201,
        description: "The client with its secret (shown once)",
        schema: clientWithSecret,
      },
      problems: ["not-found", "validation-failed", "conflict"],
      handler: async (ctx) => {
        platformOnly(ctx.principal);
        const accountId = ctx.params.account_id;
        adminOnlyForPlatform(accountId, ctx.body.scopes);
        const made = await createClient(pool, {
          accountId,
          name: ctx.body.name,
          scopes: ctx.body.scopes,
        });
        return { status: 201, body: { ...clientView(made), client_secret: made.clientSecret } };
      },
    }),
    adminRoute({
      method: "get",
      path: "/admin/accounts/{account_id}/clients",
      operationId: "listClients",
      summary: "List an account's OAuth clients",
      description:
        "The account's OAuth clients, disabled ones included, with their scopes. Secrets are never returned: rotate one to get a new secret.",
      params: accountParams,
      success: {
        status: 200,
        description: "The account's clients (never their secrets)",
        schema: clientsPage,
      },
      problems: ["not-found"],
      handler: async (ctx) => {
        platformOnly(ctx.principal);
        await getAccount(pool, ctx.params.account_id);
        return onePage((await listClients(pool, ctx.params.account_id)).map(clientView));
      },
    }),
    adminRoute({
      method: "post",
      path: "/admin/clients/{client_id}/disable",
      operationId: "disableClient",
      examples: { response: { ...clientExample, disabled_at: "2026-11-24T22:10:00.000Z" } },
      summary: "Disable an OAuth client",
      description:
        "It gets no new tokens, and its access tokens are refused from the next request on.",
      params: clientParams,
      success: { status: 200, description: "The disabled client", schema: client },
      problems: ["not-found"],
      handler: async (ctx) => {
        platformOnly(ctx.principal);
        return ok(clientView(await disableClient(pool, ctx.params.client_id)));
      },
    }),
    adminRoute({
      method: "post",
      path: "/admin/clients/{client_id}/rotate-secret",
      operationId: "rotateClientSecret",
      summary: "Give an OAuth client a new secret",
      description: "The old secret stops working at once; the new one is shown once.",
      params: clientParams,
      success: {
        status: 200,
        description: "The client with its new secret",
        schema: clientWithSecret,
      },
      problems: ["not-found"],
      handler: async (ctx) => {
        platformOnly(ctx.principal);
        const rotated = await rotateClientSecret(pool, ctx.params.client_id);
        return ok({ ...clientView(rotated), client_secret: rotated.clientSecret });
      },
    }),
    adminRoute({
      method: "post",
      path: "/admin/accounts/{account_id}/service-tokens",
      operationId: "createServiceToken",
      summary: "Create a service token of an account",
      description:
        "A long-lived bearer credential (`sbt_…`) for the account with the scopes named, expiring after `expires_in` seconds or never. The token is shown once; only its hash is stored.",
      params: accountParams,
      body: serviceTokenCreate,
      success: {
        status: 201,
        description: "The service token (shown once)",
        schema: serviceTokenWithSecret,
      },
      problems: ["not-found", "validation-failed"],
      handler: async (ctx) => {
        platformOnly(ctx.principal);
        const accountId = ctx.params.account_id;
        adminOnlyForPlatform(accountId, ctx.body.scopes);
        const made = await createServiceToken(pool, {
          accountId,
          scopes: ctx.body.scopes,
          name: ctx.body.name,
          expiresInSeconds: ctx.body.expires_in,
        });
        return { status: 201, body: { ...tokenView(made), token: made.token } };
      },
    }),
    adminRoute({
      method: "get",
      path: "/admin/accounts/{account_id}/service-tokens",
      operationId: "listServiceTokens",
      summary: "List an account's service tokens",
      description:
        "The account's service tokens, revoked and expired ones included, each with its display hint: never the token itself.",
      params: accountParams,
      success: {
        status: 200,
        description: "The account's service tokens (redacted)",
        schema: serviceTokensPage,
      },
      problems: ["not-found"],
      handler: async (ctx) => {
        platformOnly(ctx.principal);
        await getAccount(pool, ctx.params.account_id);
        return onePage((await listServiceTokens(pool, ctx.params.account_id)).map(tokenView));
      },
    }),
    adminRoute({
      method: "post",
      path: "/admin/service-tokens/{token_id}/revoke",
      operationId: "revokeServiceToken",
      examples: {
        response: { ...serviceTokenExample, revoked_at: "2026-11-24T22:10:00.000Z" },
      },
      summary: "Revoke a service token",
      description: "Refused from the next request on.",
      params: serviceTokenParams,
      success: { status: 200, description: "The revoked token", schema: serviceToken },
      problems: ["not-found"],
      handler: async (ctx) => {
        platformOnly(ctx.principal);
        return ok(tokenView(await revokeServiceToken(pool, ctx.params.token_id)));
      },
    }),
    adminRoute({
      method: "get",
      path: "/admin/keys",
      operationId: "listSigningKeys",
      summary: "List signing keys",
      description:
        "The platform's signing keys (public parts), active and retired, by purpose; `purpose` narrows the list.",
      query: keysQuery,
      success: {
        status: 200,
        description: "Signing keys, active and retired",
        schema: signingKeysPage,
      },
      problems: [],
      handler: async (ctx) => {
        platformOnly(ctx.principal);
        return onePage((await listSigningKeys(deps.keys, ctx.query.purpose)).map(keyView));
      },
    }),
    adminRoute({
      method: "post",
      path: "/admin/keys/rotate",
      operationId: "rotateSigningKey",
      summary: "Rotate a signing key",
      description:
        "The old key retires: it signs no more, and its public key stays in the JWKS so earlier tokens still verify.",
      body: keyRotate,
      success: { status: 201, description: "The new active key", schema: signingKey },
      problems: ["validation-failed"],
      handler: async (ctx) => {
        platformOnly(ctx.principal);
        return { status: 201, body: keyView(await rotateSigningKey(deps.keys, ctx.body.purpose)) };
      },
    }),
  ];
}
