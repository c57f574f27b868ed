import { z } from "zod";

/** What the embedded mode (`npm start`) reads besides every component's settings. */
export const embeddedSettings = z.object({
  DATA_DIR: z.string().min(1).default(".switchboard").describe("embedded mode's data folder"),
  EMBEDDED_SEED_COUNT: z.coerce
    .number()
    .int()
    .min(1)
    .max(5_000_000)
    .default(50_000)
    .describe("demo numbers seeded on the embedded mode's first start"),
});
