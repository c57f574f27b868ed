import { SigningKeyStore, type Logger, type Pool, type PublicJwk } from "@switchboard/kit";
import { wire, type usage } from "@switchboard/proto";
import { RECORD_SIGNING_PURPOSE } from "./record-signer.js";

/** The record-signing keys in usage.signing_keys: Ed25519, purpose usage-record. */
export function createUsageKeyStore(options: {
  pool: Pool;
  secret: string;
  logger?: Logger;
  /** How long a process signs with the active key it knows before re-checking (default 60 s). */
  activeKeyTtlMs?: number;
}): SigningKeyStore {
  return new SigningKeyStore({
    pool: options.pool,
    schema: "usage",
    secret: options.secret,
    purposes: [RECORD_SIGNING_PURPOSE],
    algorithms: { [RECORD_SIGNING_PURPOSE]: "EdDSA" },
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.activeKeyTtlMs ? { activeKeyTtlMs: options.activeKeyTtlMs } : {}),
  });
}

const str = (value: unknown): string => (typeof value === "string" ? value : "");

export function toPublicKey(jwk: PublicJwk, status: wire.KeyStatusValue): usage.PublicKey {
  return {
    kid: jwk.kid,
    kty: str(jwk.kty),
    crv: str(jwk.crv),
    x: str(jwk.x),
    y: typeof jwk.y === "string" ? jwk.y : undefined,
    alg: jwk.alg,
    use: "sig",
    status: wire.keyStatus.of(status),
  };
}

/** Every published key (active first), with its status. */
export async function publicKeys(keys: SigningKeyStore): Promise<usage.PublicKey[]> {
  const [jwks, infos] = await Promise.all([keys.publicJwks(), keys.list(RECORD_SIGNING_PURPOSE)]);
  const status = new Map(infos.map((info) => [info.kid, info.status]));
  return jwks.keys.map((jwk) => toPublicKey(jwk, status.get(jwk.kid) ?? "retired"));
}

/** Rotates the record-signing key; the old one stays published. */
export async function rotatePublicKey(keys: SigningKeyStore): Promise<usage.PublicKey> {
  const rotated = await keys.rotate(RECORD_SIGNING_PURPOSE);
  const jwk = (await keys.publicJwks()).keys.find((key) => key.kid === rotated.kid);
  if (!jwk) throw new Error(`the rotated key ${rotated.kid} is not published`);
  return toPublicKey(jwk, "active");
}
