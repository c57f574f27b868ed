import { createCipheriv, createDecipheriv, randomBytes, scrypt } from "node:crypto";

/**
 * Webhook signing secrets at rest. Unlike client secrets they cannot be hashed: every delivery
 * signs with them. Each is sealed with AES-256-GCM under a key derived once per process (scrypt)
 * from SIGNING_KEY_SECRET; the additional data binds a sealed secret to its subscription, so a
 * row copied onto another subscription does not open. Envelope: `v1.<iv>.<ciphertext>.<tag>`.
 */
export interface SecretBox {
  seal(plaintext: string, subscriptionId: string): string;
  open(envelope: string, subscriptionId: string): string;
}

const salt = "switchboard:webhook-secrets:v1";

const deriveKey = (secret: string): Promise<Buffer> =>
  new Promise((resolve, reject) =>
    scrypt(secret, salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );

const aad = (subscriptionId: string) =>
  Buffer.from(`switchboard-webhook-secret:v1:${subscriptionId}`);

export async function createSecretBox(secret: string): Promise<SecretBox> {
  if (secret.length === 0) throw new TypeError("the secret-sealing key must not be empty");
  const key = await deriveKey(secret);
  return {
    seal(plaintext, subscriptionId) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      cipher.setAAD(aad(subscriptionId));
      const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return ["v1", iv, ciphertext, cipher.getAuthTag()]
        .map((part) => (typeof part === "string" ? part : part.toString("base64url")))
        .join(".");
    },
    open(envelope, subscriptionId) {
      const parts = envelope.split(".");
      if (parts.length !== 4 || parts[0] !== "v1") {
        throw new Error("a webhook secret has an unreadable envelope");
      }
      const [iv, ciphertext, tag] = parts.slice(1).map((p) => Buffer.from(p, "base64url"));
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, iv as Buffer, { authTagLength: 16 });
        decipher.setAAD(aad(subscriptionId));
        decipher.setAuthTag(tag as Buffer);
        return Buffer.concat([decipher.update(ciphertext as Buffer), decipher.final()]).toString(
          "utf8",
        );
      } catch {
        throw new Error(
          "a webhook secret cannot be opened: SIGNING_KEY_SECRET differs from the one it was sealed with",
        );
      }
    },
  };
}
