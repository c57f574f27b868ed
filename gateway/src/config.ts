import { z } from "zod";
import {
  addressVariable,
  env,
  loadConfig,
  publicBaseUrl,
  carrierSetting,
  carrierSideSettings,
  databaseUrlSetting,
  requireInProduction,
  sideCarrier,
  secretSettings,
  requireUnlessLoopback,
  signingKeySecretOf,
} from "@switchboard/kit";
import { backendNames, type BackendAddresses } from "./backends.js";
import { gatewayComponent } from "./component.js";
import { parseRateLimits } from "./policies/rate-limit-config.js";

/** Each backend's gRPC address (<NAME>_ADDR, host:port): the platform or the chart sets them. */
const backendAddressSchema = Object.fromEntries(
  Object.values(backendNames).map((name) => [
    addressVariable(name),
    z
      .string({ error: `${addressVariable(name)} is required (host:port of ${name})` })
      .min(1, `${addressVariable(name)} is required (host:port of ${name})`)
      .describe(`gRPC address (host:port) of ${name}`),
  ]),
);

export const gatewaySettings = z
  .object({
    ...secretSettings,
    PORT: env.port(gatewayComponent.httpPort).describe("gateway HTTP port"),
    HOST: z
      .string()
      .default("127.0.0.1")
      .describe("gateway listen address (the Helm chart sets `0.0.0.0`)"),
    PUBLIC_URL: env
      .optionalUrl()
      .describe(
        "the gateway's public base URL: token issuer, errors_url, links, the STIR/SHAKEN x5u (default http://localhost:$PORT)",
      ),
    ERRORS_URL: env
      .optionalUrl()
      .describe("base of problem `type` URIs (default $PUBLIC_URL/v1/errors)"),
    DATABASE_URL: databaseUrlSetting.describe("PostgreSQL URL"),
    DATABASE_STATEMENT_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .min(100)
      .max(60_000)
      .default(3_000)
      .describe(
        "deadline of each of the gateway's own statements and of the wait for a connection: past it the server cancels the statement (504) or the gateway stops waiting for a database that does not answer (503)",
      ),
    ...backendAddressSchema,
    CARRIER: carrierSetting,
    VOICE_CARRIER: carrierSideSettings.VOICE_CARRIER,
    MESSAGING_CARRIER: carrierSideSettings.MESSAGING_CARRIER,
    SMOKE_MESSAGE_TO: z
      .string()
      .regex(/^\+[1-9]\d{1,14}$/, "must be an E.164 number")
      .default("+15550209990")
      .describe(
        "the agent smoke's SMS recipient: a sandbox number that is delivered; with a real SMSC, a handset of yours",
      ),
    SMOKE_CALL_TO: z
      .string()
      .regex(/^\+[1-9]\d{1,14}$/, "must be an E.164 number")
      .optional()
      .describe(
        "with the sip voice carrier, the number the agent smoke calls through the trunk (one that answers: a test line or an IVR of yours), from its own seat `smoke` (register a phone in auto-answer with the seat's rotated SIP credentials); the smoke hangs up once it answers. Unset: calls.outbound is skipped on sip",
      ),
    GRPC_DEADLINE_MS: z.coerce
      .number()
      .int()
      .min(50)
      .max(60_000)
      .default(5_000)
      .describe("deadline of every gateway → service call"),
    TOKEN_TTL_SECONDS: z.coerce
      .number()
      .int()
      .min(60)
      .max(86_400)
      .default(900)
      .describe("access token lifetime"),
    TOKEN_AUDIENCE: z.string().optional().describe("`aud` of access tokens (default $PUBLIC_URL)"),
    BOOTSTRAP_ACCOUNT: z
      .string()
      .regex(/^acct_[a-z0-9_]{1,60}$/)
      .default("acct_default")
      .describe(
        "the bootstrap client's account (the platform's own: only its credentials may use /v1/admin)",
      ),
    BOOTSTRAP_CLIENT_ID: z
      .string()
      .min(1)
      .max(128)
      .optional()
      .describe("bootstrap client with every scope (the embedded mode generates and prints one)"),
    BOOTSTRAP_CLIENT_SECRET: z
      .string()
      .min(16, "must be at least 16 characters")
      .optional()
      .describe("its secret (at least 16 characters; set together with BOOTSTRAP_CLIENT_ID)"),
    REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")
      .optional()
      .or(z.literal("").transform(() => undefined))
      .describe(
        "Redis for the rate-limit buckets and the queues (BullMQ); unset → in-process stores (embedded mode)",
      ),
    REDIS_KEY_PREFIX: z
      .string()
      .max(100)
      .default("switchboard:")
      .describe("prefix of the gateway's Redis keys"),
    REDIS_COMMAND_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .min(10)
      .max(10_000)
      .default(250)
      .describe("a bucket check slower than this fails open"),
    RATE_LIMITS: z
      .string()
      .default("")
      .transform((value, ctx) => {
        try {
          return parseRateLimits(value);
        } catch (error) {
          ctx.addIssue({ code: "custom", message: (error as Error).message });
          return z.NEVER;
        }
      })
      .describe(
        "`permission=capacity/refill-per-second,…` over the defaults; `public` is the per-address bucket of public and unauthenticated requests; `*` every bucket",
      ),
    CORS_ORIGINS: z
      .string()
      .default("")
      .transform((value) =>
        value
          .split(",")
          .map((origin) => origin.trim())
          .filter(Boolean),
      )
      .pipe(
        z.array(
          z
            .string()
            .regex(
              /^(\*|https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?)$/,
              "must be `*` or an origin (scheme://host[:port], no path)",
            ),
        ),
      )
      .describe(
        "comma-separated origins of browser apps allowed to call the API (`https://app.example.com`), or `*`; empty: no CORS headers",
      ),
    TRUST_PROXY: z
      .string()
      .default("")
      .transform((value) => {
        const trimmed = value.trim();
        if (trimmed === "" || trimmed === "false") return false;
        if (trimmed === "true") return true;
        return /^\d+$/.test(trimmed) ? Number(trimmed) : trimmed;
      })
      .describe(
        "express `trust proxy`: which proxies' `X-Forwarded-For` names the client (`loopback`, a hop count, CIDRs); set it behind a load balancer",
      ),
    IDEMPOTENCY_WAIT_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(60_000)
      .default(10_000)
      .describe(
        "how long a concurrent retry waits for the original before 409 `idempotency-in-progress`",
      ),
    IDEMPOTENCY_LEASE_SECONDS: z.coerce
      .number()
      .min(1)
      .max(3_600)
      .default(60)
      .describe(
        "lease of an in-progress key; after it a retry may take over a key whose gateway died. Until then a retry gets 409 `idempotency-in-progress` whose `Retry-After` is the lease left",
      ),
    IDEMPOTENCY_PURGE_INTERVAL_SECONDS: z.coerce
      .number()
      .int()
      .min(0)
      .max(86_400)
      .default(600)
      .describe("how often expired keys are deleted (0 = never)"),
    // The usage record path: one api.request record per reply, committed before the reply is sent.
    USAGE_RECORDS: env
      .bool(true)
      .describe(
        "the record path; `false` only for diagnostics and benchmarks, refused in production",
      ),
    USAGE_RECORD_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .min(1)
      .max(60_000)
      .default(2_000)
      .describe(
        "how long a reply waits for its record (and a keyed request's answer) to be committed in PostgreSQL, retrying a database that is down; past it the reply is 503 with Retry-After",
      ),
    PLATFORM_ACCOUNT: z
      .string()
      .regex(/^acct_[a-z0-9_]{1,60}$/)
      .default("acct_platform")
      .describe("account of public and unauthenticated requests' records"),
    REDIS_QUEUE_PREFIX: z
      .string()
      .min(1)
      .max(100)
      .default("sb")
      .describe("Redis key prefix of the queues (gateway and services must match)"),
    IDEMPOTENCY_SYNCHRONOUS_COMMIT: env
      .bool(false)
      .describe(
        "`true`: key claims wait for their own WAL flush. By default they are flushed by the keyed operation's own commit, later in the same log (see How the two policies share a request); set `true` when the gateway's database is on another PostgreSQL cluster than the services'",
      ),
    // The agent smoke (POST /api/agent/smoke): the whole run, one step, the sandbox call length.
    SMOKE_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .min(1_000)
      .max(120_000)
      .default(30_000)
      .describe(
        "the agent smoke's whole run, cleanup included (keep it under `IDEMPOTENCY_LEASE_SECONDS`)",
      ),
    SMOKE_STEP_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .min(100)
      .max(120_000)
      .default(10_000)
      .describe("one step's budget; the call steps get `SANDBOX_CALL_SECONDS` on top"),
    SANDBOX_CALL_SECONDS: carrierSideSettings.SANDBOX_CALL_SECONDS,
  })
  .superRefine((value, ctx) => {
    requireInProduction(value, ctx);
    requireUnlessLoopback(value, "HOST", value.HOST, ctx);
    if (Boolean(value.BOOTSTRAP_CLIENT_ID) !== Boolean(value.BOOTSTRAP_CLIENT_SECRET)) {
      ctx.addIssue({
        code: "custom",
        path: ["BOOTSTRAP_CLIENT_SECRET"],
        message: "BOOTSTRAP_CLIENT_ID and BOOTSTRAP_CLIENT_SECRET are set together",
      });
    }
  })
  .transform((value) => {
    const publicUrl = publicBaseUrl(value.PUBLIC_URL, value.PORT);
    return {
      nodeEnv: value.NODE_ENV,
      port: value.PORT,
      host: value.HOST,
      publicUrl,
      errorsUrl: (value.ERRORS_URL ?? `${publicUrl}/v1/errors`).replace(/\/$/, ""),
      databaseUrl: value.DATABASE_URL,
      statementTimeoutMs: value.DATABASE_STATEMENT_TIMEOUT_MS,
      backends: Object.fromEntries(
        Object.entries(backendNames).map(([key, name]) => [
          key,
          String((value as Record<string, unknown>)[addressVariable(name)]),
        ]),
      ) as BackendAddresses,
      /** Each side's carrier as the services choose it (sandbox routes and smoke steps follow). */
      carriers: {
        voice: sideCarrier(value, value.VOICE_CARRIER, ["sandbox", "sip"] as const),
        messaging: sideCarrier(value, value.MESSAGING_CARRIER, ["sandbox", "smpp"] as const),
      },
      grpcDeadlineMs: value.GRPC_DEADLINE_MS,
      signingKeySecret: signingKeySecretOf(value),
      tokenTtlSeconds: value.TOKEN_TTL_SECONDS,
      tokenAudience: value.TOKEN_AUDIENCE ?? publicUrl,
      /** The platform's own account: only its credentials may use /v1/admin (docs/api.md). */
      adminAccount: value.BOOTSTRAP_ACCOUNT,
      bootstrap:
        value.BOOTSTRAP_CLIENT_ID && value.BOOTSTRAP_CLIENT_SECRET
          ? {
              accountId: value.BOOTSTRAP_ACCOUNT,
              clientId: value.BOOTSTRAP_CLIENT_ID,
              clientSecret: value.BOOTSTRAP_CLIENT_SECRET,
            }
          : undefined,
      trustProxy: value.TRUST_PROXY,
      corsOrigins: value.CORS_ORIGINS,
      usageRecords: {
        enabled: value.USAGE_RECORDS,
        timeoutMs: value.USAGE_RECORD_TIMEOUT_MS,
        platformAccount: value.PLATFORM_ACCOUNT,
        queuePrefix: value.REDIS_QUEUE_PREFIX,
      },
      policies: {
        redisUrl: value.REDIS_URL,
        redisKeyPrefix: value.REDIS_KEY_PREFIX,
        redisCommandTimeoutMs: value.REDIS_COMMAND_TIMEOUT_MS,
        rateLimits: value.RATE_LIMITS,
        idempotencyWaitMs: value.IDEMPOTENCY_WAIT_MS,
        idempotencyLeaseSeconds: value.IDEMPOTENCY_LEASE_SECONDS,
        idempotencyPurgeIntervalSeconds: value.IDEMPOTENCY_PURGE_INTERVAL_SECONDS,
        idempotencySynchronousCommit: value.IDEMPOTENCY_SYNCHRONOUS_COMMIT,
      },
      smoke: {
        timeoutMs: value.SMOKE_TIMEOUT_MS,
        stepTimeoutMs: value.SMOKE_STEP_TIMEOUT_MS,
        sandboxCallSeconds: value.SANDBOX_CALL_SECONDS,
        messageTo: value.SMOKE_MESSAGE_TO,
        callTo: value.SMOKE_CALL_TO,
      },
    };
  });

export type GatewayConfig = z.infer<typeof gatewaySettings>;

export const loadGatewayConfig = (source: NodeJS.ProcessEnv = process.env): GatewayConfig =>
  loadConfig(gatewaySettings, source);
