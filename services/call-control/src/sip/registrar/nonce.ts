import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** How a nonce presented back fares (RFC 7616 §3.3 "stale"). */
export type NonceCheck = "valid" | "stale" | "invalid";

const stampBytes = 6;
const saltBytes = 9;
const macBytes = 16;
/** Replicas' clocks may differ by this much: a nonce from the near future still counts. */
const clockSkewMs = 30_000;

/**
 * Digest nonces any replica can check without shared state: base64url of the issue time (ms,
 * 48 bits), 72 random bits, and an HMAC-SHA-256 of both (truncated to 128 bits) under a key
 * every replica derives from INTERNAL_SECRET. A nonce older than `lifetimeMs` is stale (the
 * client retries with a fresh one, RFC 7616 §3.3); one whose MAC does not verify is invalid.
 */
export class NonceIssuer {
  constructor(
    private readonly key: Buffer,
    private readonly lifetimeMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  issue(): string {
    const stamp = Buffer.alloc(stampBytes);
    stamp.writeUIntBE(this.now(), 0, stampBytes);
    const body = Buffer.concat([stamp, randomBytes(saltBytes)]);
    return Buffer.concat([body, this.mac(body)]).toString("base64url");
  }

  /**
   * How long after its issue a nonce may still be valid on some replica (its life, and the
   * clock skew allowed both ways): a record of its use must be kept this long.
   */
  get longestLifeMs(): number {
    return this.lifetimeMs + 2 * clockSkewMs;
  }

  check(nonce: string): NonceCheck {
    const raw = /^[A-Za-z0-9_-]{1,64}$/.test(nonce) ? Buffer.from(nonce, "base64url") : undefined;
    if (raw?.length !== stampBytes + saltBytes + macBytes) return "invalid";
    const body = raw.subarray(0, stampBytes + saltBytes);
    if (!timingSafeEqual(this.mac(body), raw.subarray(stampBytes + saltBytes))) return "invalid";
    const age = this.now() - body.readUIntBE(0, stampBytes);
    if (age < -clockSkewMs) return "invalid";
    return age > this.lifetimeMs ? "stale" : "valid";
  }

  private mac(body: Buffer): Buffer {
    return createHmac("sha256", this.key).update(body).digest().subarray(0, macBytes);
  }
}
