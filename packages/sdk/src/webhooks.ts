import { createHmac, timingSafeEqual } from "node:crypto";

/** A webhook that does not verify: wrong signature, stale timestamp or missing headers. */
export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
}

/**
 * Verifies a Standard Webhooks delivery (webhook-id, webhook-timestamp, webhook-signature: space
 * separated `v1,<base64 HMAC-SHA256 of id.timestamp.body>`) with the subscription's `whsec_`
 * secret, and returns the parsed payload. `toleranceSeconds` bounds replays (default 5 min).
 */
export function verifyWebhook<T = unknown>(
  secret: string,
  headers: Record<string, string | string[] | undefined> | Headers,
  body: string,
  options: { toleranceSeconds?: number; now?: number } = {},
): T {
  const get = (name: string) => {
    const value = headers instanceof Headers ? headers.get(name) : headers[name];
    return Array.isArray(value) ? value[0] : (value ?? undefined);
  };
  const id = get("webhook-id");
  const timestamp = get("webhook-timestamp");
  const signatures = get("webhook-signature");
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError("missing webhook headers");
  const now = options.now ?? Date.now() / 1000;
  if (
    !/^\d+$/.test(timestamp) ||
    Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300)
  ) {
    throw new WebhookVerificationError("the webhook timestamp is out of tolerance");
  }
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest();
  const matches = signatures.split(" ").some((entry) => {
    const [version, signature] = entry.split(",");
    if (version !== "v1" || !signature) return false;
    const given = Buffer.from(signature, "base64");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError("no signature matches");
  return JSON.parse(body) as T;
}
