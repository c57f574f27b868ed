import { fileURLToPath } from "node:url";
import { migrate, type Pool } from "@switchboard/kit";

/** SQL migrations ship beside src/ and dist/ (both one level below the package root). */
export const migrationsDir = fileURLToPath(new URL("../migrations", import.meta.url));

/** Applies the webhook service's migrations to its `webhook` schema; returns the names applied. */
export const migrateWebhook = (pool: Pool): Promise<string[]> =>
  migrate(pool, {
    schema: "webhook",
    dir: migrationsDir,
    kitTables: ["outbox", "processed_events"],
  });
