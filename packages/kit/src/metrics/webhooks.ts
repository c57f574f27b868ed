import { Counter, Histogram } from "prom-client";
import { metricsRegistry } from "./registry.js";

export type WebhookDeliveryOutcome = "delivered" | "retry" | "failed" | "disabled";

const outcomes: WebhookDeliveryOutcome[] = ["delivered", "retry", "failed", "disabled"];

const deliveries = new Counter({
  name: "webhook_deliveries_total",
  help: "Webhook delivery attempts by outcome: delivered, retry (another attempt follows), failed (final), disabled (the subscription was disabled)",
  labelNames: ["outcome"] as const,
  registers: [metricsRegistry],
});

const deliveryDuration = new Histogram({
  name: "webhook_delivery_duration_seconds",
  help: "Time of one webhook delivery attempt (guard, connect, request, response), by outcome",
  labelNames: ["outcome"] as const,
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [metricsRegistry],
});

/** Every outcome at zero, so `rate()` works before the first failure (call when a worker starts). */
export function initWebhookDeliveryMetrics(): void {
  for (const outcome of outcomes) deliveries.inc({ outcome }, 0);
}

export function observeWebhookDelivery(outcome: WebhookDeliveryOutcome, durationMs: number): void {
  deliveries.inc({ outcome });
  deliveryDuration.observe({ outcome }, durationMs / 1000);
}
