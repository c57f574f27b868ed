import { fileURLToPath } from "node:url";
import { migrate, type Pool } from "@switchboard/kit";

/** SQL migrations ship beside src/ and dist/ (both one level below the package root). */
export const migrationsDir = fileURLToPath(new URL("../migrations", import.meta.url));

/** Applies the usage service's migrations to its `usage` schema; returns the names applied. */
export const migrateUsage = (pool: Pool): Promise<string[]> =>
  migrate(pool, {
    schema: "usage",
    dir: migrationsDir,
    kitTables: ["signing_keys", "processed_events"],
  });
