import type { Logger, Pool } from "@switchboard/kit";
import type { AccessTokenSettings } from "./access-token.js";
import { clientStatusReader, createAuthenticator, type Authenticator } from "./authenticator.js";
import { ClientStatusCache } from "./client-status-cache.js";
import { authorizationServerMetadata, type AuthorizationServerMetadata } from "./metadata.js";
import { SigningKeyStore, type PublicJwk } from "./signing-key-store.js";
import { ClientLockout } from "./client-lockout.js";
import { HashingGate } from "./hashing-gate.js";
import { createTokenEndpoint, type TokenRequest, type TokenResponse } from "./token-endpoint.js";

export { ACCESS_TOKEN_TYPE, type AccessTokenSettings } from "./access-token.js";
export type { Authenticator } from "./authenticator.js";
export type { AuthorizationServerMetadata } from "./metadata.js";
export { gatewayMigrationsDir, migrateGateway } from "./migrations.js";
export { requireScope, type Principal } from "./principal.js";
export { canonicalScopes, defaultScopes, isScope, scopes, type Scope } from "./scopes.js";
export {
  ACCESS_TOKEN_PURPOSE,
  SIGNING_ALG,
  SigningKeyStore,
  type ActiveSigningKey,
  type PublicJwk,
  type SigningKeyInfo,
  type SigningKeyStoreOptions,
} from "./signing-key-store.js";
export type {
  TokenErrorBody,
  TokenErrorCode,
  TokenRequest,
  TokenResponse,
  TokenSuccessBody,
} from "./token-endpoint.js";

export interface IdentityOptions {
  pool: Pool;
  /** The public base URL (PUBLIC_URL): `iss` of tokens, base of the discovery URLs. */
  issuer: string;
  /** `aud` of access tokens, checked on every request. */
  audience: string;
  /** Access token lifetime; default 900 s. */
  tokenTtlSeconds?: number;
  /** SIGNING_KEY_SECRET: private signing keys are sealed under it. */
  signingKeySecret: string;
  logger?: Logger;
  /** Client secrets hashed at once at /oauth/token (default 2). */
  maxConcurrentHashing?: number;
}

export interface Identity {
  authenticator: Authenticator;
  /** `POST /oauth/token`. */
  tokenEndpoint(request: TokenRequest): Promise<TokenResponse>;
  /** `GET /.well-known/jwks.json`. */
  jwks(): Promise<{ keys: PublicJwk[] }>;
  /** `GET /.well-known/oauth-authorization-server`. */
  authorizationServerMetadata(): AuthorizationServerMetadata;
  keys: SigningKeyStore;
  /** The cap on concurrent secret hashing (its `peak`, for tests). */
  hashing: HashingGate;
  /** Ensures an active signing key exists and opens with the secret; call at boot. */
  init(): Promise<void>;
  /**
   * Remembers clients' status while told of every change (LISTEN on a connection of the pool's
   * own, until `close`); without it, every request reads its client's row.
   */
  watchClients(): void;
  /** Stops watching clients. */
  close(): Promise<void>;
}

export function createIdentity(options: IdentityOptions): Identity {
  const issuer = options.issuer.replace(/\/+$/, "");
  const ttlSeconds = options.tokenTtlSeconds ?? 900;
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1) {
    throw new TypeError("tokenTtlSeconds must be a positive whole number");
  }
  const settings: AccessTokenSettings = { issuer, audience: options.audience, ttlSeconds };
  const keys = new SigningKeyStore({
    pool: options.pool,
    secret: options.signingKeySecret,
    ...(options.logger ? { logger: options.logger } : {}),
  });
  const metadata = authorizationServerMetadata(issuer);
  // Two scrypts at once (one per core of a small machine), 64 more waiting, 16 of one source.
  const hashing = new HashingGate(options.maxConcurrentHashing ?? 2, 64, 16);
  const clientStatus = new ClientStatusCache(clientStatusReader(options.pool));
  let listening: { stop(): Promise<void> } | undefined;
  return {
    authenticator: createAuthenticator({ db: options.pool, keys, settings, clientStatus }),
    tokenEndpoint: createTokenEndpoint({
      db: options.pool,
      lockout: new ClientLockout(options.pool, { logger: options.logger }),
      hashing,
      keys,
      settings,
      logger: options.logger,
    }),
    jwks: () => keys.publicJwks(),
    authorizationServerMetadata: () => structuredClone(metadata),
    keys,
    hashing,
    init: () => keys.init(),
    watchClients: () => {
      listening ??= clientStatus.listen(options.pool, options.logger);
    },
    close: async () => {
      await listening?.stop();
      listening = undefined;
    },
  };
}
