import { aesGcmOpen, aesGcmSeal, scryptAsync } from "@switchboard/kit";

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
  scryptAsync(secret, salt, { ln: 15, r: 8, p: 1 });

const aad = (subscriptionId: string) =>
  Buffer.from(`switchboard-webhook-secret:v1:${subscriptionId}`);

export async function createSecretBox(secret: string): Promise<SecretBox> {
  if (secret.length === 0) throw new TypeError("the secret-sealing key must not be empty");
  const key = await deriveKey(secret);
  return {
    seal(plaintext, subscriptionId) {
      return ["v1", ...aesGcmSeal(key, plaintext, aad(subscriptionId))].join(".");
    },
    open(envelope, subscriptionId) {
      const parts = envelope.split(".");
      if (parts.length !== 4 || parts[0] !== "v1") {
        throw new Error("a webhook secret has an unreadable envelope");
      }
      const plaintext = aesGcmOpen(key, parts.slice(1), aad(subscriptionId));
      if (plaintext === undefined) {
        throw new Error(
          "a webhook secret cannot be opened: SIGNING_KEY_SECRET differs from the one it was sealed with",
        );
      }
      return plaintext;
    },
  };
}
