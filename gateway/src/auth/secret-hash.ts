import { randomBytes, timingSafeEqual } from "node:crypto";
import { scryptAsync, type ScryptParams } from "@switchboard/kit";

/**
 * Client secrets at rest: scrypt with a random 16-byte salt per secret, stored as a PHC-style
 * string `$scrypt$ln=14,r=8,p=1$<salt>$<hash>` (base64url). The parameters travel with the
 * hash, so they can be raised later without invalidating stored secrets.
 */
/**
 * N = 2^14, r = 8, p = 1: 16 MiB and about 45 ms per hash on one core. Generated secrets carry
 * 256 bits of randomness; the work factor is there for operator-chosen (bootstrap) secrets,
 * and bounded so the token endpoint stays cheap enough to serve.
 */
export const defaultScryptParams: ScryptParams = { ln: 14, r: 8, p: 1 };

const HASH_BYTES = 32;
const SALT_BYTES = 16;
const MAX_SECRET_LENGTH = 1024;

export async function hashSecret(
  secret: string,
  params: ScryptParams = defaultScryptParams,
): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await scryptAsync(secret, salt, params);
  return `$scrypt$ln=${params.ln},r=${params.r},p=${params.p}$${salt.toString("base64url")}$${hash.toString("base64url")}`;
}

interface ParsedHash {
  params: ScryptParams;
  salt: Buffer;
  hash: Buffer;
}

const phcPattern = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([\w-]{16,})\$([\w-]{16,})$/;

function parseHash(stored: string): ParsedHash | undefined {
  const match = phcPattern.exec(stored);
  if (!match) return undefined;
  const [ln, r, p] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (ln < 10 || ln > 20 || r < 1 || p < 1) return undefined;
  return {
    params: { ln, r, p },
    salt: Buffer.from(match[4] ?? "", "base64url"),
    hash: Buffer.from(match[5] ?? "", "base64url"),
  };
}

/**
 * True when `secret` matches `stored`. Always does one full scrypt, compared in constant
 * time; a malformed stored hash or an over-long candidate is a mismatch, not an error.
 */
export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored) ?? parseHash(dummyHash);
  if (!parsed) return false;
  const candidate = secret.length <= MAX_SECRET_LENGTH ? secret : "";
  const computed = await scryptAsync(candidate, parsed.salt, parsed.params, parsed.hash.length);
  const same = timingSafeEqual(computed, parsed.hash);
  return same && stored !== dummyHash && secret.length <= MAX_SECRET_LENGTH;
}

/**
 * A valid hash of a secret nobody knows, with the default parameters. Checking a presented
 * secret against it costs what checking a real client's does, so the time an unknown
 * client id takes does not tell it apart from a known one.
 */
export const dummyHash = `$scrypt$ln=${defaultScryptParams.ln},r=${defaultScryptParams.r},p=${defaultScryptParams.p}$${randomBytes(SALT_BYTES).toString("base64url")}$${randomBytes(HASH_BYTES).toString("base64url")}`;
