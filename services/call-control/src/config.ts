import { env, loadConfig, publicBaseUrl } from "@switchboard/kit";
import { stirShakenCertificatePath } from "@switchboard/proto";
import { z } from "zod";

const DEV_SIGNING_KEY_SECRET = "switchboard-development-signing-key-secret";

/**
 * Settings of the call-control service that every run mode shares (embedded, tests and mesh
 * read them from the environment; mesh adds its listen address and database).
 */
const settingsSchema = z
  .object({
    NODE_ENV: env.nodeEnv(),
    CARRIER: z.enum(["sandbox"]).optional(),
    SANDBOX_CALL_SECONDS: z.coerce.number().min(0).max(86_400).default(2),
    SANDBOX_RING_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(100),
    INBOUND_RING_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(600).default(30),
    PUBLIC_URL: env.optionalUrl(),
    /** The gateway's port: without PUBLIC_URL the public URL is the gateway's local address. */
    PORT: env.port(8080),
    SIGNING_KEY_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
    STIR_SHAKEN_SPC: z
      .string()
      .regex(/^[A-Za-z0-9]{1,16}$/, "must be 1–16 letters or digits")
      .default("SWBD"),
    CALL_TIMER_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(250),
    CALL_TIMER_BATCH_SIZE: z.coerce.number().int().min(1).max(1_000).default(100),
    INVENTORY_DEADLINE_MS: z.coerce.number().int().min(50).max(60_000).default(2_000),
  })
  .superRefine((value, ctx) => {
    if (value.NODE_ENV !== "production") return;
    if (!value.SIGNING_KEY_SECRET) {
      ctx.addIssue({
        code: "custom",
        path: ["SIGNING_KEY_SECRET"],
        message: "is required in production",
      });
    }
    if (!value.CARRIER) {
      ctx.addIssue({ code: "custom", path: ["CARRIER"], message: "is required in production" });
    }
  })
  .transform((value) => {
    return {
      carrier: value.CARRIER ?? ("sandbox" as const),
      sandbox: {
        callSeconds: value.SANDBOX_CALL_SECONDS,
        ringDelayMs: value.SANDBOX_RING_DELAY_MS,
      },
      inboundRingTimeoutSeconds: value.INBOUND_RING_TIMEOUT_SECONDS,
      /** The PASSporT's x5u: where the gateway serves this service's certificate. */
      certificateUrl: `${publicBaseUrl(value.PUBLIC_URL, value.PORT)}${stirShakenCertificatePath}`,
      signingKeySecret: value.SIGNING_KEY_SECRET ?? DEV_SIGNING_KEY_SECRET,
      serviceProviderCode: value.STIR_SHAKEN_SPC,
      timers: { pollIntervalMs: value.CALL_TIMER_POLL_MS, batchSize: value.CALL_TIMER_BATCH_SIZE },
      inventoryDeadlineMs: value.INVENTORY_DEADLINE_MS,
    };
  });

export type CallControlSettings = z.infer<typeof settingsSchema>;

export const loadCallControlSettings = (
  source: NodeJS.ProcessEnv = process.env,
): CallControlSettings => loadConfig(settingsSchema, source);

/** Mesh mode adds the database, the listen address and the inventory's address. */
const meshSchema = z.object({
  DATABASE_URL: z.string().min(1, "DATABASE_URL is required (a postgres:// URL)"),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")
    .optional()
    .or(z.literal("").transform(() => undefined)),
  REDIS_QUEUE_PREFIX: z.string().min(1).max(100).default("sb"),
  CALL_CONTROL_GRPC_PORT: env.port(50052),
  CALL_CONTROL_GRPC_HOST: z.string().min(1).default("127.0.0.1"),
  INVENTORY_ADDR: z.string().min(1).default("127.0.0.1:50051"),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
  /** After SIGTERM, how long calls already live keep running here before timers take over. */
  CALL_DRAIN_SECONDS: z.coerce.number().min(0).max(3_600).default(60),
});

export const loadMeshConfig = (source: NodeJS.ProcessEnv = process.env) => ({
  ...loadConfig(meshSchema, source),
  settings: loadCallControlSettings(source),
});
