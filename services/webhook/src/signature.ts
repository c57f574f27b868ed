import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * Standard Webhooks 1.0 (https://www.standardwebhooks.com): symmetric `v1` signatures.
 * A secret is `whsec_` + base64 of 24–64 random bytes; the HMAC key is those bytes. The signed
 * content is `${webhook-id}.${webhook-timestamp}.${body}`; `webhook-signature` is a
 * space-separated list of `v1,<base64 HMAC-SHA256>`, one per secret in force.
 */
export const secretPrefix = "whsec_";
const secretBytes = 32;

/** A new signing secret (256 random bits). */
export const newSigningSecret = (): string =>
  `${secretPrefix}${randomBytes(secretBytes).toString("base64")}`;

/** The HMAC key of a `whsec_` secret. */
export function secretKey(secret: string): Buffer {
  if (!secret.startsWith(secretPrefix)) throw new Error("a webhook secret starts with whsec_");
  const key = Buffer.from(secret.slice(secretPrefix.length), "base64");
  if (key.length < 24 || key.length > 64) throw new Error("a webhook secret holds 24–64 bytes");
  return key;
}

/** `v1,<base64>` for one key. */
export function sign(key: Buffer, id: string, timestamp: number, body: string): string {
  const mac = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64");
  return `v1,${mac}`;
}

export interface SignedHeaders {
  "webhook-id": string;
  "webhook-timestamp": string;
  "webhook-signature": string;
}

/** The three Standard Webhooks headers, signed with every key in force (newest first). */
export function signedHeaders(
  keys: readonly Buffer[],
  id: string,
  body: string,
  now: Date = new Date(),
): SignedHeaders {
  if (keys.length === 0) throw new Error("a delivery needs at least one signing key");
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": keys.map((key) => sign(key, id, timestamp, body)).join(" "),
  };
}

/**
 * Verifies received headers against the keys (as a receiver does): some `v1` signature must
 * match one key, and the timestamp must be within `toleranceSeconds` of now.
 */
export function verifySignature(
  keys: readonly Buffer[],
  headers: { id: string; timestamp: string; signature: string },
  body: string,
  options: { now?: Date; toleranceSeconds?: number } = {},
): boolean {
  const timestamp = Number(headers.timestamp);
  if (!/^\d{1,12}$/.test(headers.timestamp) || !Number.isSafeInteger(timestamp)) return false;
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? 300)) return false;
  const presented = headers.signature
    .split(" ")
    .filter((part) => part.startsWith("v1,"))
    .map((part) => Buffer.from(part.slice(3), "base64"));
  return keys.some((key) => {
    const expected = Buffer.from(sign(key, headers.id, timestamp, body).slice(3), "base64");
    return presented.some(
      (candidate) => candidate.length === expected.length && timingSafeEqual(candidate, expected),
    );
  });
}
