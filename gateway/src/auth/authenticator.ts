import { DomainError, type Queryable } from "@switchboard/kit";
import { ClientStatusCache, type ClientStatus } from "./client-status-cache.js";
import type { AccessTokenSettings } from "./access-token.js";
import { createAccessTokenVerifier } from "./access-token-verifier.js";
import type { Principal } from "./principal.js";
import { SERVICE_TOKEN_PREFIX } from "./service-token-format.js";
import { verifyServiceToken } from "./service-token-verifier.js";
import type { SigningKeyStore } from "./signing-key-store.js";

export { requireScope, type Principal } from "./principal.js";

export interface Authenticator {
  /**
   * Resolves `Authorization: Bearer <credential>` to a principal. Throws `unauthenticated`
   * without a Bearer credential and `invalid-token` for any credential that does not verify.
   */
  authenticate(authorizationHeader: string | undefined): Promise<Principal>;
}

export interface AuthenticatorDeps {
  db: Queryable;
  keys: SigningKeyStore;
  settings: Pick<AccessTokenSettings, "issuer" | "audience">;
  /** Remembers clients' status while told of their changes (default: read on every request). */
  clientStatus?: ClientStatusCache;
}

/** RFC 6750 §2.1 b64token. */
const b64token = /^[A-Za-z0-9\-._~+/]+=*$/;

const MAX_CREDENTIAL_LENGTH = 8 * 1024;

export function createAuthenticator(deps: AuthenticatorDeps): Authenticator {
  const verifyAccessToken = createAccessTokenVerifier(deps.keys, deps.settings);
  const requireActiveClient = activeClientCheck(
    deps.clientStatus ?? new ClientStatusCache(clientStatusReader(deps.db)),
  );
  return {
    async authenticate(authorizationHeader) {
      const header = authorizationHeader?.trim() ?? "";
      const match = /^bearer(?: +(.*))?$/is.exec(header);
      if (!match) {
        throw new DomainError(
          "unauthenticated",
          "this endpoint requires an Authorization: Bearer credential",
        );
      }
      const credential = (match[1] ?? "").trim();
      if (credential === "")
        throw new DomainError("invalid-token", "the bearer credential is empty");
      if (credential.length > MAX_CREDENTIAL_LENGTH || !b64token.test(credential)) {
        throw new DomainError("invalid-token", "the bearer credential is malformed");
      }
      if (credential.startsWith(SERVICE_TOKEN_PREFIX)) {
        return verifyServiceToken(deps.db, credential);
      }
      const principal = await verifyAccessToken(credential);
      await requireActiveClient(principal.principalId, principal.accountId);
      return principal;
    },
  };
}

/**
 * The row a token's check reads: whether its client is active, and its account (the pool's
 * autoPrepare makes it a named statement, planned once per connection).
 */
export function clientStatusReader(
  db: Queryable,
): (clientId: string) => Promise<ClientStatus | undefined> {
  const text = `SELECT disabled_at IS NULL AS active, account_id FROM gateway.clients WHERE client_id = $1`;
  return async (clientId) => {
    const { rows } = await db.query<{ active: boolean; account_id: string }>(text, [clientId]);
    const row = rows[0];
    return row && { active: row.active, accountId: row.account_id };
  };
}

/**
 * A disabled client's access tokens are refused from the next request on, on every replica: its
 * status is read on each request, or remembered only while every change of it is notified
 * (ClientStatusCache), never with the token. The same status binds the token's account to its
 * client's: a token whose `account_id` is not its client's account is refused even when signed
 * with a key of ours.
 */
function activeClientCheck(
  cache: ClientStatusCache,
): (clientId: string, accountId: string) => Promise<void> {
  return async (clientId, accountId) => {
    const status = await cache.status(clientId);
    if (status?.active !== true) {
      throw new DomainError("invalid-token", "the access token's client is disabled or deleted");
    }
    if (status.accountId !== accountId) {
      throw new DomainError("invalid-token", "the access token's account is not its client's");
    }
  };
}
