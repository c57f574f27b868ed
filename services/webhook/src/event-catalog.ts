import { eventTypeMatches } from "@switchboard/kit";

/**
 * The events a subscription can receive (docs/api.md "Webhook subscriptions", plus the webhook
 * service's own `webhook.subscription_disabled`). Anything else on the bus — usage facts such
 * as `webhook.delivered` or `smoke.run` — is internal and never delivered, which also keeps a
 * `*` subscription from feeding on its own deliveries.
 */
export const webhookEventTypes = [
  "number.held",
  "number.hold_expired",
  "number.released",
  "number.assigned",
  "call.incoming",
  "call.initiated",
  "call.ringing",
  "call.answered",
  "call.completed",
  "message.queued",
  "message.sent",
  "message.delivered",
  "message.failed",
  "message.received",
  "consent.revoked",
  "webhook.test",
  "webhook.subscription_disabled",
] as const;

export type WebhookEventType = (typeof webhookEventTypes)[number];

const catalog = new Set<string>(webhookEventTypes);
const prefixes = new Set(webhookEventTypes.map((type) => type.slice(0, type.indexOf("."))));

export const isDeliverableType = (type: string): boolean => catalog.has(type);

/** Why a subscription's event pattern is refused, or undefined when it is fine. */
export function patternProblem(pattern: string): string | undefined {
  if (pattern === "*") return undefined;
  if (pattern.endsWith(".*")) {
    const prefix = pattern.slice(0, -2);
    return prefixes.has(prefix)
      ? undefined
      : `no events start with ${prefix}.; use one of ${[...prefixes].map((p) => `${p}.*`).join(", ")} or *`;
  }
  return catalog.has(pattern) ? undefined : `unknown event type ${pattern}`;
}

/** True when a subscription's patterns select the event type. */
export const subscribesTo = (patterns: readonly string[], type: string): boolean =>
  patterns.length > 0 && eventTypeMatches(type, patterns);
