import { z } from "zod";
import {
  env,
  loadConfig,
  parseDuration,
  parseRetrySchedule,
  requireInProduction,
  secretSettings,
  signingKeySecretOf,
} from "@switchboard/kit";

/** docs/api.md's schedule: the delays before the 2nd … 10th attempt. */
export const defaultRetrySchedule = "5s,5m,30m,2h,5h,10h,14h,20h,24h";

/** What the webhook service needs besides its stores; the same in every run mode. */
export interface WebhookSettings {
  /** Hosts and addresses exempt from the SSRF guard (plain http allowed for them). */
  allowPrivateHosts: string[];
  /** The ports a subscription's URL may name (empty: any); delivery-ports.ts. */
  allowedPorts: number[];
  /** Delays before the 2nd, 3rd, … attempt; attempts = delays + 1. */
  retryDelaysMs: number[];
  /** Each delay is drawn from [delay × (1 − jitter), delay]. */
  retryJitter: number;
  /** A Retry-After longer than this is cut to it. */
  retryAfterMaxMs: number;
  /** One attempt's whole budget: connect, send, response headers. */
  timeoutMs: number;
  /** Deliveries one worker runs at once. */
  concurrency: number;
  /** A subscription whose attempts have all failed for this long is disabled. */
  disableAfterMs: number;
  /** How long a rotated-out secret keeps signing beside the new one. */
  secretOverlapMs: number;
  /** Seals signing secrets at rest (SIGNING_KEY_SECRET). */
  secretKey: string;
  /** A pending delivery this overdue is handed to a new job (its job was lost). */
  redispatchAfterMs: number;
  sweepIntervalMs: number;
  /** How long GET /api/events keeps an event (at least 3 days). */
  eventRetentionMs: number;
  /** The internal sink's loopback listener (0: any free port). */
  sinkPort: number;
  /** Subscriptions per account (deleted ones excluded). */
  subscriptionLimit: number;
  /** Run delivery workers in this process (the mesh may run them apart: worker-main.ts). */
  deliveryWorkers: boolean;
}

/** docs/api.md: GET /api/events lists at least the last 3 days. */
const minimumEventRetentionMs = 3 * 24 * 3_600_000;

const duration = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((value, ctx) => {
      try {
        return parseDuration(value);
      } catch (error) {
        ctx.addIssue({ code: "custom", message: (error as Error).message });
        return z.NEVER;
      }
    });

export const webhookEnvSchema = z
  .object({
    ...secretSettings,
    WEBHOOK_ALLOW_PRIVATE_HOSTS: env
      .list()
      .describe(
        "targets exempt from the SSRF guard (plain http allowed for them), each matched with its port: `host` (the scheme's default port only), `host:port`, `host:*` (any port); the internal sink's port is never accepted from the API",
      ),
    WEBHOOK_ALLOWED_PORTS: env
      .list()
      .pipe(
        z.array(
          z
            .string()
            .regex(/^[0-9]{1,5}$/, "must list TCP ports")
            .transform(Number)
            .pipe(z.number().min(1).max(65_535)),
        ),
      )
      .describe(
        "the ports a subscription's URL may name (e.g. `443`; the Helm chart sets the list its NetworkPolicy opens); empty: any port; hosts in WEBHOOK_ALLOW_PRIVATE_HOSTS are exempt",
      ),
    WEBHOOK_RETRY_SCHEDULE: z
      .string()
      .default(defaultRetrySchedule)
      .transform((value, ctx) => {
        try {
          const delays = parseRetrySchedule(value);
          if (delays.length > 50) throw new Error("at most 50 delays");
          return delays;
        } catch (error) {
          ctx.addIssue({ code: "custom", message: (error as Error).message });
          return z.NEVER;
        }
      })
      .describe("delays before the 2nd…10th attempt"),
    WEBHOOK_RETRY_JITTER: z.coerce
      .number()
      .min(0)
      .max(1)
      .default(0.2)
      .describe("jitter fraction of each retry delay"),
    WEBHOOK_RETRY_AFTER_MAX: duration("24h").describe("cap on a receiver's `Retry-After`"),
    WEBHOOK_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .min(50)
      .max(60_000)
      .default(10_000)
      .describe("one attempt's time budget"),
    WEBHOOK_DELIVERY_CONCURRENCY: z.coerce
      .number()
      .int()
      .min(1)
      .max(1_000)
      .default(50)
      .describe("deliveries per worker at once"),
    WEBHOOK_DISABLE_AFTER: duration("5d").describe(
      "failing this long disables a subscription (and a `webhook.subscription_disabled` event says so)",
    ),
    WEBHOOK_SECRET_OVERLAP: duration("24h").describe(
      "a rotated-out secret keeps signing this long",
    ),
    WEBHOOK_REDISPATCH_AFTER: duration("10m").describe(
      "overdue pending deliveries get a new job after this",
    ),
    WEBHOOK_SWEEP_INTERVAL: duration("1m").describe("sweep period of overdue deliveries"),
    WEBHOOK_EVENT_RETENTION: duration("7d")
      .refine((ms) => ms >= minimumEventRetentionMs, "must be at least 3d (the API's promise)")
      .describe(
        "how long `GET /api/events` keeps an event (at least 3d); the sweeper purges older ones",
      ),
    WEBHOOK_SINK_PORT: env
      .port(0)
      .describe(
        "the internal verifying sink's loopback port (0: any free port; 50056 in its own process)",
      ),
    WEBHOOK_SUBSCRIPTION_LIMIT: z.coerce
      .number()
      .int()
      .min(1)
      .max(10_000)
      .default(100)
      .describe("subscriptions per account"),
    WEBHOOK_DELIVERY_WORKERS: env
      .bool(true)
      .describe("run delivery workers in the service process (`worker-main.js` runs them apart)"),
  })
  .superRefine(requireInProduction)
  .transform((value): WebhookSettings => ({
    allowPrivateHosts: value.WEBHOOK_ALLOW_PRIVATE_HOSTS.map((host) => host.toLowerCase()),
    allowedPorts: value.WEBHOOK_ALLOWED_PORTS,
    retryDelaysMs: value.WEBHOOK_RETRY_SCHEDULE,
    retryJitter: value.WEBHOOK_RETRY_JITTER,
    retryAfterMaxMs: value.WEBHOOK_RETRY_AFTER_MAX,
    timeoutMs: value.WEBHOOK_TIMEOUT_MS,
    concurrency: value.WEBHOOK_DELIVERY_CONCURRENCY,
    disableAfterMs: value.WEBHOOK_DISABLE_AFTER,
    secretOverlapMs: value.WEBHOOK_SECRET_OVERLAP,
    secretKey: signingKeySecretOf(value),
    redispatchAfterMs: value.WEBHOOK_REDISPATCH_AFTER,
    sweepIntervalMs: value.WEBHOOK_SWEEP_INTERVAL,
    eventRetentionMs: value.WEBHOOK_EVENT_RETENTION,
    sinkPort: value.WEBHOOK_SINK_PORT,
    subscriptionLimit: value.WEBHOOK_SUBSCRIPTION_LIMIT,
    deliveryWorkers: value.WEBHOOK_DELIVERY_WORKERS,
  }));

/** The webhook settings from the environment, validated (fails fast naming the variable). */
export const loadWebhookSettings = (source: NodeJS.ProcessEnv = process.env): WebhookSettings =>
  loadConfig(webhookEnvSchema, source);
