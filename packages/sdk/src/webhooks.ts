import type { components } from "./schema.js";

/** Any event a delivery carries, typed from the OpenAPI document's `webhooks` section. */
export type WebhookEvent = components["schemas"]["WebhookEvent"];

/** The event types (`number.held`, `call.completed`, …). */
export type WebhookEventType = WebhookEvent["type"];

/** A webhook that does not verify: wrong signature, stale timestamp or missing headers. */
export class WebhookVerificationError extends Error {
  override readonly name: string = "WebhookVerificationError";
}

/** A delivery verified before (same `webhook-id`): a replay, or the retry of one already handled. */
export class WebhookReplayError extends WebhookVerificationError {
  override readonly name = "WebhookReplayError";
}

/**
 * A de-duplicator for `verifyWebhook`'s `firstDelivery`: remembers each `webhook-id` for
 * `windowSeconds` (default 10 min, past the 5 min tolerance, so a replay of a signed delivery is
 * caught for as long as its timestamp would pass), in this process's memory. A receiver with
 * several processes keeps the ids in its own store instead (a unique key in its database).
 */
export function recentWebhookIds(windowSeconds = 600): (id: string) => boolean {
  const seen = new Map<string, number>();
  return (id) => {
    const now = Date.now();
    for (const [known, at] of seen) {
      if (now - at <= windowSeconds * 1000) break;
      seen.delete(known);
    }
    if (seen.has(id)) return false;
    seen.set(id, now);
    return true;
  };
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
 * secret, and resolves to the parsed payload. `toleranceSeconds` bounds replays (default 5 min);
 * `firstDelivery` (e.g. `recentWebhookIds()`) is asked, once the signature verifies, whether this
 * `webhook-id` is new: `false` throws WebhookReplayError. Deliveries are at-least-once, so a
 * retry of a delivery already handled is refused the same way. Web Crypto only
 * (crypto.subtle.verify compares in constant time), so it runs in Node, browsers' workers and
 * edge runtimes alike.
 */
export async function verifyWebhook<T = WebhookEvent>(
  secret: string,
  headers: Record<string, string | string[] | undefined> | Headers,
  body: string,
  options: {
    toleranceSeconds?: number;
    now?: number;
    firstDelivery?: (id: string) => boolean | Promise<boolean>;
  } = {},
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
      if (options.firstDelivery && !(await options.firstDelivery(id))) {
        throw new WebhookReplayError(`webhook ${id} was delivered before`);
      }
      return JSON.parse(body) as T;
    }
  }
  throw new WebhookVerificationError("no signature matches");
}
