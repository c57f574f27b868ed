import { z } from "zod";
import { env, loadConfig, publicBaseUrl } from "@switchboard/kit";
import { parseRateLimits } from "./policies/rate-limit-config.js";

const DEV_SIGNING_KEY_SECRET = "switchboard-development-signing-key-secret";

/** The key-encryption secret; the development default is refused in production. */
export function signingKeySecretFrom(source: NodeJS.ProcessEnv = process.env): string {
  if (source.SIGNING_KEY_SECRET) return source.SIGNING_KEY_SECRET;
  if (source.NODE_ENV === "production")
    throw new Error("SIGNING_KEY_SECRET is required in production");
  return DEV_SIGNING_KEY_SECRET;
}

const schema = z
  .object({
    NODE_ENV: env.nodeEnv(),
    PORT: env.port(8080),
    HOST: z.string().default("127.0.0.1"),
    PUBLIC_URL: env.optionalUrl(),
    ERRORS_URL: env.optionalUrl(),
    DATABASE_URL: z.string().min(1, "DATABASE_URL is required"),
    INVENTORY_ADDR: z.string().default("127.0.0.1:50051"),
    USAGE_ADDR: z.string().default("127.0.0.1:50054"),
    MESSAGING_ADDR: z.string().default("127.0.0.1:50053"),
    CALL_CONTROL_ADDR: z.string().default("127.0.0.1:50052"),
    WEBHOOK_ADDR: z.string().default("127.0.0.1:50055"),
    CARRIER: z.enum(["sandbox"]).optional(),
    GRPC_DEADLINE_MS: z.coerce.number().int().min(50).max(60_000).default(5_000),
    SIGNING_KEY_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
    TOKEN_TTL_SECONDS: z.coerce.number().int().min(60).max(86_400).default(900),
    TOKEN_AUDIENCE: z.string().optional(),
    BOOTSTRAP_ACCOUNT: z
      .string()
      .regex(/^acct_[a-z0-9_]{1,60}$/)
      .default("acct_default"),
    BOOTSTRAP_CLIENT_ID: z.string().min(1).max(128).optional(),
    BOOTSTRAP_CLIENT_SECRET: z.string().min(16, "must be at least 16 characters").optional(),
    REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")
      .optional()
      .or(z.literal("").transform(() => undefined)),
    REDIS_KEY_PREFIX: z.string().max(100).default("switchboard:"),
    REDIS_COMMAND_TIMEOUT_MS: z.coerce.number().int().min(10).max(10_000).default(250),
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
      }),
    TRUST_PROXY: z
      .string()
      .default("")
      .transform((value) => {
        const trimmed = value.trim();
        if (trimmed === "" || trimmed === "false") return false;
        if (trimmed === "true") return true;
        return /^\d+$/.test(trimmed) ? Number(trimmed) : trimmed;
      }),
    IDEMPOTENCY_WAIT_MS: z.coerce.number().int().min(0).max(60_000).default(10_000),
    IDEMPOTENCY_LEASE_SECONDS: z.coerce.number().min(1).max(3_600).default(60),
    IDEMPOTENCY_PURGE_INTERVAL_SECONDS: z.coerce.number().int().min(0).max(86_400).default(600),
    // The usage record path: one api.request record per reply, queued before the reply is sent.
    USAGE_RECORDS: env.bool(true),
    USAGE_RECORD_TIMEOUT_MS: z.coerce.number().int().min(1).max(60_000).default(1_000),
    PLATFORM_ACCOUNT: z
      .string()
      .regex(/^acct_[a-z0-9_]{1,60}$/)
      .default("acct_platform"),
    REDIS_QUEUE_PREFIX: z.string().min(1).max(100).default("sb"),
    IDEMPOTENCY_SYNCHRONOUS_COMMIT: env.bool(false),
    // The agent smoke (POST /api/agent/smoke): the whole run, one step, the sandbox call length.
    SMOKE_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(120_000).default(30_000),
    SMOKE_STEP_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
    SANDBOX_CALL_SECONDS: z.coerce.number().min(0).max(86_400).default(2),
  })
  .superRefine((value, ctx) => {
    if (value.NODE_ENV === "production" && !value.SIGNING_KEY_SECRET) {
      ctx.addIssue({
        code: "custom",
        path: ["SIGNING_KEY_SECRET"],
        message: "is required in production",
      });
    }
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
      backends: {
        inventory: value.INVENTORY_ADDR,
        usage: value.USAGE_ADDR,
        messaging: value.MESSAGING_ADDR,
        callControl: value.CALL_CONTROL_ADDR,
        webhook: value.WEBHOOK_ADDR,
      },
      /** The sandbox-only routes exist while the sandbox carrier is active (default outside production). */
      sandbox:
        (value.CARRIER ?? (value.NODE_ENV === "production" ? undefined : "sandbox")) === "sandbox",
      grpcDeadlineMs: value.GRPC_DEADLINE_MS,
      signingKeySecret: value.SIGNING_KEY_SECRET ?? DEV_SIGNING_KEY_SECRET,
      tokenTtlSeconds: value.TOKEN_TTL_SECONDS,
      tokenAudience: value.TOKEN_AUDIENCE ?? publicUrl,
      /** The platform's own account: only its credentials may use /v1/admin (API.md). */
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
      },
    };
  });

export type GatewayConfig = z.infer<typeof schema>;

export const loadGatewayConfig = (source: NodeJS.ProcessEnv = process.env): GatewayConfig =>
  loadConfig(schema, source);
