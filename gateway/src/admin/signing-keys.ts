import { validationFailed } from "@switchboard/kit";
import {
  ACCESS_TOKEN_PURPOSE,
  type SigningKeyInfo,
  type SigningKeyStore,
} from "../auth/signing-key-store.js";

/**
 * Key administration goes through the live store, so the process that rotates signs with the
 * new key at once; other replicas pick it up within the store's active-key TTL.
 */
export async function rotateSigningKey(
  keys: SigningKeyStore,
  purpose: string = ACCESS_TOKEN_PURPOSE,
): Promise<SigningKeyInfo> {
  if (!/^[a-z][a-z0-9-]{0,63}$/.test(purpose)) {
    throw validationFailed([
      { pointer: "#/purpose", detail: "must be a-z 0-9 - (e.g. access-token)" },
    ]);
  }
  if (!keys.purposes.includes(purpose)) {
    throw validationFailed([
      { pointer: "#/purpose", detail: `must be one of: ${keys.purposes.join(", ")}` },
    ]);
  }
  return keys.rotate(purpose);
}

export function listSigningKeys(
  keys: SigningKeyStore,
  purpose?: string,
): Promise<SigningKeyInfo[]> {
  return keys.list(purpose);
}
