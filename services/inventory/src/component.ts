import { defineComponent, runningComponent } from "@switchboard/kit";
import { z } from "zod";
import { defaultHoldLimit } from "./holds.js";
import { startInventory } from "./server.js";

const settings = z.object({
  HOLD_LIMIT_PER_ACCOUNT: z.coerce
    .number()
    .int()
    .min(1)
    .max(10_000)
    .default(defaultHoldLimit)
    .describe("live holds one account may have at once"),
  HOLD_SWEEP_INTERVAL_MS: z.coerce
    .number()
    .int()
    .min(100)
    .max(3_600_000)
    .default(30_000)
    .describe("how often expired holds are released"),
});

/** Numbers, search and holds. */
export const inventoryComponent = defineComponent({
  name: "inventory",
  grpcPort: 50051,
  adminPort: 9091,
  needs: [],
  poolSize: 10,
  settings,
  start: async ({ addresses: _addresses, ownProcess: _ownProcess, ...deps }, config) =>
    runningComponent(
      await startInventory({
        ...deps,
        holdLimit: config.HOLD_LIMIT_PER_ACCOUNT,
        sweepIntervalMs: config.HOLD_SWEEP_INTERVAL_MS,
      }),
    ),
});
