import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

/** AES-256-GCM with a random 96-bit IV and a 128-bit tag, the parts base64url-encoded. */
export function aesGcmSeal(key: Buffer, plaintext: string, aad: Buffer): string[] {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return [iv, ciphertext, cipher.getAuthTag()].map((part) => part.toString("base64url"));
}

/** Opens what aesGcmSeal produced; undefined when the key, the AAD or the parts do not match. */
export function aesGcmOpen(key: Buffer, parts: string[], aad: Buffer): string | undefined {
  const [iv, ciphertext, tag] = parts.map((part) => Buffer.from(part, "base64url"));
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, iv!, { authTagLength: 16 });
    decipher.setAAD(aad);
    decipher.setAuthTag(tag!);
    return Buffer.concat([decipher.update(ciphertext!), decipher.final()]).toString("utf8");
  } catch {
    return undefined;
  }
}
