import { DomainError, type Queryable } from "@switchboard/kit";
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
  /** The per-request read as a named statement (a real PostgreSQL server only). */
  namedStatements?: boolean;
}

/** RFC 6750 §2.1 b64token. */
const b64token = /^[A-Za-z0-9\-._~+/]+=*$/;

const MAX_CREDENTIAL_LENGTH = 8 * 1024;

export function createAuthenticator(deps: AuthenticatorDeps): Authenticator {
  const verifyAccessToken = createAccessTokenVerifier(deps.keys, deps.settings);
  const requireActiveClient = activeClientCheck(deps.db, deps.namedStatements === true);
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
      await requireActiveClient(principal.principalId);
      return principal;
    },
  };
}

/**
 * A disabled client's access tokens are refused from the next request on, on every replica:
 * its status is read on each request (a primary-key lookup), never remembered with the token.
 * On PostgreSQL the read is a named statement, parsed and planned once per connection.
 */
function activeClientCheck(
  db: Queryable,
  namedStatements: boolean,
): (clientId: string) => Promise<void> {
  const text = "SELECT disabled_at IS NULL AS active FROM gateway.clients WHERE client_id = $1";
  const name = namedStatements ? { name: "gateway-client-active" } : {};
  return async (clientId) => {
    const { rows } = await db.query<{ active: boolean }>({ ...name, text, values: [clientId] });
    if (rows[0]?.active !== true) {
      throw new DomainError("invalid-token", "the access token's client is disabled or deleted");
    }
  };
}
