import { createHash, randomBytes } from "node:crypto";

/**
 * Service tokens: `sbt_` + 32 random bytes in base64url (256 bits). Shown once; stored only
 * as their SHA-256 (a full-entropy secret needs no salt or work factor) and a redacted hint.
 */
export const SERVICE_TOKEN_PREFIX = "sbt_";

const tokenPattern = /^sbt_[A-Za-z0-9_-]{43}$/;

export const generateServiceToken = (): string =>
  `${SERVICE_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;

export const isServiceTokenFormat = (value: string): boolean => tokenPattern.test(value);

export const hashServiceToken = (token: string): Buffer =>
  createHash("sha256").update(token, "utf8").digest();

/** `sbt_AbCd…wxyz`: enough to tell tokens apart in a listing, far too little to use. */
export const serviceTokenHint = (token: string): string => {
  const body = token.slice(SERVICE_TOKEN_PREFIX.length);
  return `${SERVICE_TOKEN_PREFIX}${body.slice(0, 4)}…${body.slice(-4)}`;
};
