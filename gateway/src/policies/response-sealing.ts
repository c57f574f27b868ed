import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * Stored idempotent responses are sealed at rest (AES-256-GCM): some are shown only once (a
 * webhook secret `whsec_…`), and the store keeps them for 24 hours. The key is derived from
 * SIGNING_KEY_SECRET; the additional data binds a body to its account and key, so a sealed body
 * copied onto another row does not open. Envelope: `v1.<iv>.<ciphertext>.<tag>` (base64url).
 */
export class ResponseSealer {
  private readonly key: Buffer;

  constructor(secret: string) {
    if (secret.length === 0) throw new TypeError("the response sealing secret must not be empty");
    this.key = Buffer.from(
      hkdfSync("sha256", secret, "switchboard", "switchboard-idempotent-response:v1", 32),
    );
  }

  seal(body: string, accountId: string, idempotencyKey: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(aad(accountId, idempotencyKey));
    const sealed = Buffer.concat([cipher.update(body, "utf8"), cipher.final()]);
    return ["v1", iv, sealed, cipher.getAuthTag()]
      .map((part) => (typeof part === "string" ? part : part.toString("base64url")))
      .join(".");
  }

  open(envelope: string, accountId: string, idempotencyKey: string): string {
    const [version, iv, sealed, tag] = envelope.split(".");
    if (version !== "v1" || !iv || sealed === undefined || !tag) {
      throw new Error("not a sealed response");
    }
    const decipher = createDecipheriv("aes-256-gcm", this.key, Buffer.from(iv, "base64url"));
    decipher.setAAD(aad(accountId, idempotencyKey));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([
      decipher.update(Buffer.from(sealed, "base64url")),
      decipher.final(),
    ]).toString("utf8");
  }
}

const aad = (accountId: string, idempotencyKey: string): Buffer =>
  Buffer.from(`${accountId}\n${idempotencyKey}`);
