import {
  SigningKeyStore as KitSigningKeyStore,
  type SigningKeyInfo,
  type SigningKeyStoreOptions as KitSigningKeyStoreOptions,
} from "@switchboard/kit";

/**
 * The gateway's signing keys: the kit's store over `gateway.signing_keys` (created by
 * migrations/1795244400000_identity.sql), signing access tokens with EdDSA (Ed25519).
 */
export type { ActiveSigningKey, PublicJwk, SigningKeyInfo } from "@switchboard/kit";

/** The purpose of the keys that sign access tokens. */
export const ACCESS_TOKEN_PURPOSE = "access-token";

/** The one algorithm access tokens are signed and verified with. */
export const SIGNING_ALG = "EdDSA";

/** The gateway's schema, where `signing_keys` lives. */
export const GATEWAY_SIGNING_SCHEMA = "gateway";

export interface SigningKeyStoreOptions extends Omit<
  KitSigningKeyStoreOptions,
  "schema" | "purposes" | "algorithms"
> {
  /** Purposes served; default `access-token` only. Every one signs with EdDSA. */
  purposes?: readonly string[];
}

export class SigningKeyStore extends KitSigningKeyStore {
  constructor(options: SigningKeyStoreOptions) {
    const purposes = options.purposes ?? [ACCESS_TOKEN_PURPOSE];
    super({
      ...options,
      schema: GATEWAY_SIGNING_SCHEMA,
      purposes,
      algorithms: Object.fromEntries(purposes.map((p) => [p, SIGNING_ALG])),
    });
  }

  /** Retires the active key of `purpose` (default access-token) and activates a new one. */
  override rotate(purpose: string = ACCESS_TOKEN_PURPOSE): Promise<SigningKeyInfo> {
    return super.rotate(purpose);
  }
}
