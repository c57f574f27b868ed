import {
  defineComponent,
  requireInProduction,
  runningComponent,
  secretSettings,
  signingKeySecretOf,
} from "@switchboard/kit";
import { z } from "zod";
import { startUsage } from "./server.js";

const settings = z
  .object({
    ...secretSettings,
    USAGE_FACT_CONCURRENCY: z.coerce
      .number()
      .int()
      .min(1)
      .max(200)
      .default(64)
      .describe("business-fact jobs taken at once (a relay batch of events is one job)"),
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
      .describe(
        "threads that sign records (default 0: in line, the cheapest per record; a process with cores of its own may pipeline signing on 1–4)",
      ),
  })
  .superRefine(requireInProduction);

/** The signed usage ledger. */
export const usageComponent = defineComponent({
  name: "usage",
  grpcPort: 50054,
  adminPort: 9094,
  needs: [],
  poolSize: 10,
  settings,
  start: async ({ addresses: _addresses, ownProcess: _ownProcess, ...deps }, config) => {
    const usage = await startUsage({
      ...deps,
      signingKeySecret: signingKeySecretOf(config),
      factConcurrency: config.USAGE_FACT_CONCURRENCY,
      maxBatch: config.USAGE_BATCH_SIZE,
      ...(config.USAGE_SIGNING_THREADS !== undefined
        ? { signingThreads: config.USAGE_SIGNING_THREADS }
        : {}),
    });
    return runningComponent(usage);
  },
});
