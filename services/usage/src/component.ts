import { defineComponent, env } from "@switchboard/kit";
import { z } from "zod";
import { startUsage } from "./server.js";
import { usageSigningKeySecret } from "./signing-keys.js";

const settings = z
  .object({
    NODE_ENV: env.nodeEnv(),
    SIGNING_KEY_SECRET: z
      .string()
      .min(32, "must be at least 32 characters")
      .optional()
      .describe("seals the record-signing keys (required in production)"),
    USAGE_RECORD_CONCURRENCY: z.coerce
      .number()
      .int()
      .min(1)
      .max(2_000)
      .default(256)
      .describe("usage.records jobs taken at once"),
    USAGE_FACT_CONCURRENCY: z.coerce
      .number()
      .int()
      .min(1)
      .max(200)
      .default(64)
      .describe("business-fact events taken at once"),
    USAGE_BATCH_SIZE: z.coerce
      .number()
      .int()
      .min(1)
      .max(5_000)
      .default(500)
      .describe("records per INSERT"),
    USAGE_SIGNING_THREADS: z.coerce
      .number()
      .int()
      .min(0)
      .max(32)
      .optional()
      .describe("threads that sign records (default one per spare core, 1–4; 0 signs in line)"),
  })
  .superRefine((value, ctx) => {
    if (value.NODE_ENV === "production" && !value.SIGNING_KEY_SECRET) {
      ctx.addIssue({
        code: "custom",
        path: ["SIGNING_KEY_SECRET"],
        message: "is required in production",
      });
    }
  });

/** The signed usage ledger. */
export const usageComponent = defineComponent({
  name: "usage",
  grpcPort: 50054,
  adminPort: 9094,
  needs: [],
  poolSize: 10,
  settings,
  start: async ({ pool, bus, logger, host, port }, config) => {
    const usage = await startUsage({
      pool,
      bus,
      host,
      port,
      logger,
      signingKeySecret: usageSigningKeySecret({
        NODE_ENV: config.NODE_ENV,
        SIGNING_KEY_SECRET: config.SIGNING_KEY_SECRET,
      }),
      recordConcurrency: config.USAGE_RECORD_CONCURRENCY,
      factConcurrency: config.USAGE_FACT_CONCURRENCY,
      maxBatch: config.USAGE_BATCH_SIZE,
      ...(config.USAGE_SIGNING_THREADS !== undefined
        ? { signingThreads: config.USAGE_SIGNING_THREADS }
        : {}),
    });
    return {
      port: usage.port,
      instance: usage,
      readiness: () => usage.health.check(),
      stop: async () => {
        usage.server.setServing(false);
        await usage.stop();
      },
    };
  },
});
