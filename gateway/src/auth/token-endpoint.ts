import { textProblem } from "../http/text-safety.js";
import type { Logger, Queryable } from "@switchboard/kit";
import type { ClientLockout } from "./client-lockout.js";
import type { HashingGate } from "./hashing-gate.js";
import { issueAccessToken, type AccessTokenSettings } from "./access-token.js";
import { readClientCredentials } from "./client-authentication.js";
import { verifyClient } from "./client-store.js";
import { canonicalScopes, isScope, splitScopeString, type Scope } from "./scopes.js";
import type { SigningKeyStore } from "./signing-key-store.js";

/** `POST /oauth/token`, framework-free: the HTTP layer passes the parsed request in. */
export interface TokenRequest {
  authorization?: string | undefined;
  contentType?: string | undefined;
  /** The urlencoded body; a repeated parameter may arrive as an array (and is refused). */
  form: Record<string, string | string[] | undefined>;
  /**
   * Where the request came from (the address partition of `clientAddress`): failures lock a
   * client id for this source only, and waiting hashes take turns by source. Default `unknown`.
   */
  source?: string | undefined;
}

export type TokenErrorCode =
  "invalid_request" | "invalid_client" | "invalid_scope" | "unsupported_grant_type";

export interface TokenSuccessBody {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  scope: string;
}

export interface TokenErrorBody {
  error: TokenErrorCode;
  error_description: string;
}

export interface TokenResponse {
  status: number;
  headers: Record<string, string>;
  body: TokenSuccessBody | TokenErrorBody;
}

export interface TokenEndpointDeps {
  db: Queryable;
  /** Consecutive failures per (client id, source), shared by every replica. */
  lockout: ClientLockout;
  /** The cap on concurrent secret hashing. */
  hashing: HashingGate;
  keys: SigningKeyStore;
  settings: AccessTokenSettings;
  logger?: Logger | undefined;
}

const noStore = {
  "Content-Type": "application/json;charset=UTF-8",
  "Cache-Control": "no-store",
  Pragma: "no-cache",
};

/** An RFC 6749 §5.2 error: 401 with a Basic challenge for invalid_client, 400 otherwise. */
export function tokenError(
  error: TokenErrorCode,
  description: string,
  extraHeaders: Record<string, string> = {},
): TokenResponse {
  const challenge: Record<string, string> =
    error === "invalid_client" ? { "WWW-Authenticate": 'Basic realm="switchboard"' } : {};
  return {
    status: error === "invalid_client" ? 401 : 400,
    headers: { ...noStore, ...challenge, ...extraHeaders },
    body: { error, error_description: description },
  };
}

const isFormUrlencoded = (contentType: string | undefined): boolean =>
  contentType?.split(";")[0]?.trim().toLowerCase() === "application/x-www-form-urlencoded";

/** Client credentials grant (RFC 6749 §4.4, OAuth 2.1) issuing RFC 9068 access tokens. */
export function createTokenEndpoint(deps: TokenEndpointDeps) {
  return async function tokenEndpoint(request: TokenRequest): Promise<TokenResponse> {
    if (!isFormUrlencoded(request.contentType)) {
      return tokenError(
        "invalid_request",
        "the token request must be application/x-www-form-urlencoded",
      );
    }
    const form: Record<string, string | undefined> = {};
    for (const [name, value] of Object.entries(request.form)) {
      if (Array.isArray(value)) {
        return tokenError("invalid_request", `the parameter ${name} was sent more than once`);
      }
      form[name] = value;
    }
    if (!form.grant_type) return tokenError("invalid_request", "grant_type is required");
    if (form.grant_type !== "client_credentials") {
      return tokenError("unsupported_grant_type", "only the client_credentials grant is supported");
    }
    const read = readClientCredentials(request.authorization, form);
    if (!read.ok) return tokenError(read.error, read.description);

    let requested: Scope[] | undefined;
    if (form.scope !== undefined) {
      const names = splitScopeString(form.scope);
      const unknown = names.find((name) => !isScope(name));
      if (unknown !== undefined) return tokenError("invalid_scope", `unknown scope ${unknown}`);
      if (names.length === 0) return tokenError("invalid_scope", "the requested scope is empty");
      requested = names as Scope[];
    }

    const { clientId, clientSecret, method } = read.credentials;
    const source = request.source ?? "unknown";
    // A NUL or a lone surrogate can name no client (and must not reach the database).
    if (textProblem(clientId) !== undefined || textProblem(clientSecret) !== undefined) {
      return tokenError("invalid_client", "client authentication failed");
    }
    // A locked id is refused without hashing: guessing costs the gateway nothing then. The lock
    // holds for this source only: whoever guesses locks out themselves, not the client.
    const lockout = await deps.lockout.state(clientId, source);
    if (lockout.lockedForSeconds > 0) {
      return tokenError("invalid_client", "client authentication failed", {
        "Retry-After": String(lockout.lockedForSeconds),
      });
    }
    const outcome = await deps.hashing.run(source, async (waited) => {
      // Guesses sent together all pass the check above before the first one fails: one that
      // had to wait for a slot looks again, so a burst hashes about as often as the threshold
      // allows, not once per request. The failure is counted before the slot is handed on.
      if (waited) {
        const now = await deps.lockout.state(clientId, source);
        if (now.lockedForSeconds > 0) return { lockedForSeconds: now.lockedForSeconds };
      }
      const verified = await verifyClient(deps.db, clientId, clientSecret);
      if (!verified) await deps.lockout.failed(clientId, source);
      return { client: verified };
    });
    if ("lockedForSeconds" in outcome) {
      return tokenError("invalid_client", "client authentication failed", {
        "Retry-After": String(outcome.lockedForSeconds),
      });
    }
    const { client } = outcome;
    if (!client) {
      // The presented id is not logged: it is unverified input and may be a pasted secret.
      deps.logger?.info({ method }, "token request with bad client credentials");
      return tokenError("invalid_client", "client authentication failed");
    }
    if (lockout.hasFailures) await deps.lockout.succeeded(clientId, source);
    const allowed = new Set(client.scopes);
    const denied = requested?.find((scope) => !allowed.has(scope));
    if (denied !== undefined) {
      return tokenError("invalid_scope", `the client may not request the scope ${denied}`);
    }
    const granted = canonicalScopes(requested ?? client.scopes);
    if (granted.length === 0) return tokenError("invalid_scope", "the client has no scopes");

    const issued = await issueAccessToken(deps.keys, deps.settings, {
      clientId: client.clientId,
      accountId: client.accountId,
      scopes: granted,
    });
    deps.logger?.info(
      { client_id: client.clientId, account_id: client.accountId, jti: issued.jti },
      "access token issued",
    );
    return {
      status: 200,
      headers: { ...noStore },
      body: {
        access_token: issued.token,
        token_type: "Bearer",
        expires_in: issued.expiresIn,
        scope: issued.scope,
      },
    };
  };
}
