import { hkdfSync, randomBytes } from "node:crypto";
import { ConfigError } from "./config.js";

const DEV_INTERNAL_SECRET = "switchboard-development-internal-secret-not-for-production";

/**
 * INTERNAL_SECRET: the root of the keys every platform process shares and no client holds —
 * internal gRPC credentials and signed pagination cursors. Required (≥ 32 characters) in
 * production; the embedded launcher and the mesh supervisor generate one per run when unset.
 */
export function internalSecret(source: NodeJS.ProcessEnv = process.env): string {
  const value = source.INTERNAL_SECRET;
  if (value) {
    if (value.length < 32) throw new ConfigError("INTERNAL_SECRET: must be at least 32 characters");
    return value;
  }
  if (source.NODE_ENV === "production") {
    throw new ConfigError("INTERNAL_SECRET: required in production");
  }
  return DEV_INTERNAL_SECRET;
}

/** Sets INTERNAL_SECRET to a fresh random value unless the operator gave one. */
export function ensureInternalSecret(target: NodeJS.ProcessEnv = process.env): string {
  target.INTERNAL_SECRET ||= randomBytes(32).toString("base64url");
  return target.INTERNAL_SECRET;
}

/** A 32-byte key for one purpose, derived from the internal secret (HKDF-SHA256). */
export function internalKey(purpose: string, secret: string = internalSecret()): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "switchboard", purpose, 32));
}
