/** A webhook that does not verify: wrong signature, stale timestamp or missing headers. */
export class WebhookVerificationError extends Error {
  override readonly name = "WebhookVerificationError";
}

const encoder = new TextEncoder();

function base64Bytes(value: string): Uint8Array<ArrayBuffer> | undefined {
  try {
    return Uint8Array.from(atob(value), (c) => c.charCodeAt(0));
  } catch {
    return undefined;
  }
}

/**
 * Verifies a Standard Webhooks delivery (webhook-id, webhook-timestamp, webhook-signature: space
 * separated `v1,<base64 HMAC-SHA256 of id.timestamp.body>`) with the subscription's `whsec_`
 * secret, and resolves to the parsed payload. `toleranceSeconds` bounds replays (default 5 min).
 * Web Crypto only (crypto.subtle.verify compares in constant time), so it runs in Node,
 * browsers' workers and edge runtimes alike.
 */
export async function verifyWebhook<T = unknown>(
  secret: string,
  headers: Record<string, string | string[] | undefined> | Headers,
  body: string,
  options: { toleranceSeconds?: number; now?: number } = {},
): Promise<T> {
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
  const secretBytes = base64Bytes(secret.replace(/^whsec_/, ""));
  if (!secretBytes) throw new WebhookVerificationError("the secret is not whsec_<base64>");
  const key = await crypto.subtle.importKey(
    "raw",
    secretBytes,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["verify"],
  );
  const signed = encoder.encode(`${id}.${timestamp}.${body}`);
  for (const entry of signatures.split(" ")) {
    const [version, signature] = entry.split(",");
    const given = version === "v1" && signature ? base64Bytes(signature) : undefined;
    if (given && (await crypto.subtle.verify("HMAC", key, given, signed))) {
      return JSON.parse(body) as T;
    }
  }
  throw new WebhookVerificationError("no signature matches");
}
