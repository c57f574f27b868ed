import { randomBytes } from "node:crypto";
import { aesGcmOpen, aesGcmSeal } from "./aes-gcm.js";
import { scryptAsync, type ScryptParams } from "./scrypt.js";

/**
 * Private signing keys at rest. Each key's PKCS#8 PEM is sealed with AES-256-GCM under a key
 * derived by scrypt from the service's signing key secret and a random per-key salt. The
 * additional authenticated data binds the ciphertext to its kid, purpose and alg, so a sealed
 * key copied onto another row does not open. Envelope:
 * `v1.<ln>-<r>-<p>.<salt>.<iv>.<ciphertext>.<tag>` (base64url). The format and the AAD are
 * those the gateway has sealed its keys with from the start; do not change them.
 */
export interface KeyBinding {
  kid: string;
  purpose: string;
  alg: string;
}

/** Derivation runs once per key (at creation, and when a process first signs with it). */
const derivationParams: ScryptParams = { ln: 15, r: 8, p: 1 };

export class KeyDecryptionError extends Error {
  override readonly name = "KeyDecryptionError";
}

const aad = (binding: KeyBinding): Buffer =>
  Buffer.from(`switchboard-signing-key:v1:${binding.kid}:${binding.purpose}:${binding.alg}`);

function requireSecret(secret: string): void {
  if (secret.length === 0) throw new TypeError("the signing key secret must not be empty");
}

export async function sealPrivateKey(
  pkcs8Pem: string,
  secret: string,
  binding: KeyBinding,
): Promise<string> {
  requireSecret(secret);
  const salt = randomBytes(16);
  const key = await scryptAsync(secret, salt, derivationParams);
  const { ln, r, p } = derivationParams;
  return [
    "v1",
    `${ln}-${r}-${p}`,
    salt.toString("base64url"),
    ...aesGcmSeal(key, pkcs8Pem, aad(binding)),
  ].join(".");
}

export async function openPrivateKey(
  envelope: string,
  secret: string,
  binding: KeyBinding,
): Promise<string> {
  requireSecret(secret);
  const parts = envelope.split(".");
  const params = /^(\d{1,2})-(\d{1,2})-(\d{1,2})$/.exec(parts[1] ?? "");
  if (parts.length !== 6 || parts[0] !== "v1" || !params) {
    throw new KeyDecryptionError(`signing key ${binding.kid} has an unreadable envelope`);
  }
  const key = await scryptAsync(secret, Buffer.from(parts[2]!, "base64url"), {
    ln: Number(params[1]),
    r: Number(params[2]),
    p: Number(params[3]),
  });
  const pem = aesGcmOpen(key, parts.slice(3), aad(binding));
  if (pem === undefined) {
    throw new KeyDecryptionError(
      `signing key ${binding.kid} cannot be decrypted: SIGNING_KEY_SECRET differs from the one it was sealed with`,
    );
  }
  return pem;
}
