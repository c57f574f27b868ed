import { randomBytes } from "node:crypto";
import { DomainError, newId, type Queryable } from "@switchboard/kit";
import { defaultScopes, type Scope } from "../auth/scopes.js";
import { hashSecret } from "../auth/secret-hash.js";
import { requireAccount } from "./accounts.js";
import {
  Checks,
  MAX_CLIENT_SECRET_LENGTH,
  MIN_CLIENT_SECRET_LENGTH,
  checkName,
  checkScopes,
  clientIdPattern,
  isUniqueViolation,
} from "./validation.js";

/** An OAuth client as listed: never its secret, never its hash. */
export interface ClientInfo {
  clientId: string;
  accountId: string;
  name: string;
  scopes: Scope[];
  createdAt: Date;
  disabledAt: Date | null;
}

/** What creation returns: the secret, shown this once. */
export interface CreatedClient extends ClientInfo {
  clientSecret: string;
}

interface ClientRow {
  client_id: string;
  account_id: string;
  name: string;
  scopes: Scope[];
  created_at: Date;
  disabled_at: Date | null;
}

const columns = "client_id, account_id, name, scopes, created_at, disabled_at";

const toClient = (row: ClientRow): ClientInfo => ({
  clientId: row.client_id,
  accountId: row.account_id,
  name: row.name,
  scopes: row.scopes,
  createdAt: row.created_at,
  disabledAt: row.disabled_at,
});

/** `sbcs_` + 32 random bytes in base64url. */
export const generateClientSecret = (): string => `sbcs_${randomBytes(32).toString("base64url")}`;

export function checkClientSecret(checks: Checks, secret: string, pointer: string): void {
  checks.check(
    secret.length >= MIN_CLIENT_SECRET_LENGTH &&
      secret.length <= MAX_CLIENT_SECRET_LENGTH &&
      /^[ -~]+$/.test(secret),
    pointer,
    `must be ${MIN_CLIENT_SECRET_LENGTH} to ${MAX_CLIENT_SECRET_LENGTH} printable ASCII characters`,
  );
}

/**
 * Creates an OAuth client of an account. Scopes default to every scope but `admin`; id and
 * secret are generated (`cli_…`, `sbcs_…`) unless given. The secret is stored as a scrypt hash.
 */
export async function createClient(
  db: Queryable,
  input: {
    accountId: string;
    name?: string | undefined;
    scopes?: readonly string[] | undefined;
    clientId?: string | undefined;
    clientSecret?: string | undefined;
  },
): Promise<CreatedClient> {
  const checks = new Checks();
  const scopes = checkScopes(checks, input.scopes ?? defaultScopes, "#/scopes");
  checkName(checks, input.name, "#/name");
  if (input.clientId !== undefined) {
    checks.check(
      clientIdPattern.test(input.clientId),
      "#/client_id",
      "must be 1 to 255 visible ASCII characters",
    );
  }
  if (input.clientSecret !== undefined)
    checkClientSecret(checks, input.clientSecret, "#/client_secret");
  checks.done();
  await requireAccount(db, input.accountId);
  const clientId = input.clientId ?? newId("cli");
  const clientSecret = input.clientSecret ?? generateClientSecret();
  const secretHash = await hashSecret(clientSecret);
  try {
    const { rows } = await db.query<ClientRow>(
      `INSERT INTO gateway.clients (client_id, account_id, name, secret_hash, scopes)
       VALUES ($1, $2, $3, $4, $5) RETURNING ${columns}`,
      [clientId, input.accountId, input.name ?? "", secretHash, scopes],
    );
    return { ...toClient(rows[0] as ClientRow), clientSecret };
  } catch (error) {
    if (isUniqueViolation(error))
      throw new DomainError("conflict", `client ${clientId} already exists`);
    throw error;
  }
}

export async function listClients(db: Queryable, accountId: string): Promise<ClientInfo[]> {
  const { rows } = await db.query<ClientRow>(
    `SELECT ${columns} FROM gateway.clients WHERE account_id = $1 ORDER BY created_at, client_id`,
    [accountId],
  );
  return rows.map(toClient);
}

/** Disables a client: it gets no new tokens, and tokens already issued are refused from the next request on. */
export async function disableClient(
  db: Queryable,
  clientId: string,
  options: { accountId?: string } = {},
): Promise<ClientInfo> {
  const { rows } = await db.query<ClientRow>(
    `UPDATE gateway.clients SET disabled_at = coalesce(disabled_at, now())
      WHERE client_id = $1 AND ($2::text IS NULL OR account_id = $2)
      RETURNING ${columns}`,
    [clientId, options.accountId ?? null],
  );
  const row = rows[0];
  if (!row) throw new DomainError("not-found", `client ${clientId} was not found`);
  return toClient(row);
}

/** A new secret for a client, shown once; the old one stops working at once. */
export async function rotateClientSecret(
  db: Queryable,
  clientId: string,
  options: { accountId?: string } = {},
): Promise<CreatedClient> {
  const clientSecret = generateClientSecret();
  const secretHash = await hashSecret(clientSecret);
  const { rows } = await db.query<ClientRow>(
    `UPDATE gateway.clients SET secret_hash = $3
      WHERE client_id = $1 AND ($2::text IS NULL OR account_id = $2)
      RETURNING ${columns}`,
    [clientId, options.accountId ?? null, secretHash],
  );
  const row = rows[0];
  if (!row) throw new DomainError("not-found", `client ${clientId} was not found`);
  return { ...toClient(row), clientSecret };
}
