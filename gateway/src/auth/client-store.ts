import type { Queryable } from "@switchboard/kit";
import { isScope, type Scope } from "./scopes.js";
import { dummyHash, verifySecret } from "./secret-hash.js";

export interface AuthenticatedClient {
  clientId: string;
  accountId: string;
  scopes: Scope[];
}

interface ClientRow {
  client_id: string;
  account_id: string;
  secret_hash: string;
  scopes: string[];
  disabled_at: Date | null;
}

const MAX_CLIENT_ID_LENGTH = 255;

/**
 * Verifies a client's secret. Every path runs exactly one scrypt: an unknown client is checked
 * against a dummy hash and a disabled one is checked before it is refused, so the time taken
 * tells nothing about which client ids exist.
 */
export async function verifyClient(
  db: Queryable,
  clientId: string,
  secret: string,
): Promise<AuthenticatedClient | undefined> {
  let row: ClientRow | undefined;
  if (clientId.length <= MAX_CLIENT_ID_LENGTH) {
    const { rows } = await db.query<ClientRow>(
      `SELECT client_id, account_id, secret_hash, scopes, disabled_at
         FROM gateway.clients WHERE client_id = $1`,
      [clientId],
    );
    row = rows[0];
  }
  const matches = await verifySecret(secret, row?.secret_hash ?? dummyHash);
  if (!row || !matches || row.disabled_at !== null) return undefined;
  return {
    clientId: row.client_id,
    accountId: row.account_id,
    scopes: row.scopes.filter(isScope),
  };
}
