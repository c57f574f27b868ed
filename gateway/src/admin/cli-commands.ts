import type { Pool } from "@switchboard/kit";
import { SigningKeyStore } from "../auth/signing-key-store.js";
import { createAccount, listAccounts } from "./accounts.js";
import { createClient, disableClient, listClients } from "./clients.js";
import { createServiceToken, listServiceTokens, revokeServiceToken } from "./service-tokens.js";
import { listSigningKeys, rotateSigningKey } from "./signing-keys.js";
import { Checks, checkAdminGrant, splitScopeList } from "./validation.js";

/** The parsed command line one command sees. */
export interface CommandInput {
  options: Record<string, string | boolean | undefined>;
  /** Positionals after the noun and verb. */
  args: string[];
}

export interface CommandContext {
  pool: Pool;
  signingKeySecret: string;
  /** The platform's own account (BOOTSTRAP_ACCOUNT): the only one whose credentials hold admin. */
  adminAccount: string;
  print: (value: Printable) => void;
}

/** Rows to show: the CLI prints them as `key: value` lines, or as JSON with --json. */
export type Printable = object | object[];

export class UsageError extends Error {
  override readonly name = "UsageError";
}

const text = (input: CommandInput, name: string, required = false): string | undefined => {
  const value = input.options[name];
  if (typeof value === "string") return value;
  if (required) throw new UsageError(`--${name} is required`);
  return undefined;
};

const scopeOption = (input: CommandInput, required: boolean): string[] | undefined => {
  const value = text(input, "scopes", required);
  return value === undefined ? undefined : splitScopeList(value);
};

/** The account and scopes of a new credential, refused as the API refuses them (admin elsewhere). */
const adminGrant = (input: CommandInput, ctx: CommandContext, scopesRequired: boolean) => {
  const grant = {
    accountId: text(input, "account", true) ?? "",
    scopes: scopeOption(input, scopesRequired),
  };
  const checks = new Checks();
  checkAdminGrant(checks, { ...grant, adminAccount: ctx.adminAccount });
  checks.done();
  return grant;
};

const positional = (input: CommandInput, what: string): string => {
  const [value, ...rest] = input.args;
  if (value === undefined) throw new UsageError(`${what} is required`);
  if (rest.length > 0) throw new UsageError(`unexpected argument ${rest[0]}`);
  return value;
};

const keyStore = (ctx: CommandContext) =>
  new SigningKeyStore({ pool: ctx.pool, secret: ctx.signingKeySecret });

const secondsOption = (input: CommandInput): number | undefined => {
  const value = text(input, "expires-in");
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError("--expires-in takes a whole number of seconds");
  return Number(value);
};

type Command = (input: CommandInput, ctx: CommandContext) => Promise<void>;

export const commands: Record<string, Command> = {
  "accounts create": async (input, ctx) => {
    const id = text(input, "id");
    ctx.print(await createAccount(ctx.pool, { id, name: text(input, "name", true) ?? "" }));
  },
  "accounts list": async (_input, ctx) => ctx.print(await listAccounts(ctx.pool)),
  "clients create": async (input, ctx) => {
    const grant = adminGrant(input, ctx, false);
    const client = await createClient(ctx.pool, { ...grant, name: text(input, "name") });
    ctx.print({ ...client, note: "store client_secret now: it is not shown again" });
  },
  "clients list": async (input, ctx) =>
    ctx.print(await listClients(ctx.pool, text(input, "account", true) ?? "")),
  "clients disable": async (input, ctx) =>
    ctx.print(await disableClient(ctx.pool, positional(input, "the client id"))),
  "tokens create": async (input, ctx) => {
    const grant = adminGrant(input, ctx, true);
    const token = await createServiceToken(ctx.pool, {
      ...grant,
      scopes: grant.scopes ?? [],
      name: text(input, "name"),
      expiresInSeconds: secondsOption(input),
    });
    ctx.print({ ...token, note: "store the token now: it is not shown again" });
  },
  "tokens list": async (input, ctx) =>
    ctx.print(await listServiceTokens(ctx.pool, text(input, "account", true) ?? "")),
  "tokens revoke": async (input, ctx) =>
    ctx.print(await revokeServiceToken(ctx.pool, positional(input, "the token id (tok_…)"))),
  "keys rotate": async (input, ctx) =>
    ctx.print(await rotateSigningKey(keyStore(ctx), text(input, "purpose"))),
  "keys list": async (input, ctx) =>
    ctx.print(await listSigningKeys(keyStore(ctx), text(input, "purpose"))),
};

export const usage = `usage: switchboard admin <command> [options]

  accounts create --name NAME [--id acct_x]
  accounts list
  clients create --account ACCOUNT [--scopes "a b"] [--name NAME]   prints the secret once
  clients list --account ACCOUNT
  clients disable CLIENT_ID
  tokens create --account ACCOUNT --scopes "a b" [--name NAME] [--expires-in SECONDS]
                                                                   prints the token once
  tokens list --account ACCOUNT
  tokens revoke tok_…
  keys rotate [--purpose access-token]
  keys list [--purpose PURPOSE]
  help

options: --json prints JSON instead of key: value lines.
scopes: numbers:read numbers:write calls:read calls:write messages:read messages:write
        templates:write consents:write usage:read webhooks:read webhooks:write agent:smoke admin
        (clients default to every scope but admin)`;
