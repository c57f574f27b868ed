import { Counter } from "prom-client";
import { metricsRegistry } from "./registry.js";

const rejections = new Counter({
  name: "rate_limit_rejections_total",
  help: "Requests answered 429 rate-limited, by the bucket's permission (`public` for per-address buckets)",
  labelNames: ["permission"] as const,
  registers: [metricsRegistry],
});

const storeErrors = new Counter({
  name: "rate_limit_store_errors_total",
  help: "Rate-limit decisions the shared store (Redis) failed to take; each failed open to the replica-local bucket",
  registers: [metricsRegistry],
});

export const countRateLimitRejection = (permission: string): void => rejections.inc({ permission });

export const countRateLimitStoreError = (): void => storeErrors.inc();
