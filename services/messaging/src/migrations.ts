import { fileURLToPath } from "node:url";
import { migrate, type Pool } from "@switchboard/kit";

/** SQL migrations ship beside src/ and dist/ (both one level below the package root). */
export const migrationsDir = fileURLToPath(new URL("../migrations", import.meta.url));

/** Applies the messaging migrations to its `messaging` schema; returns the names applied. */
export const migrateMessaging = (pool: Pool): Promise<string[]> =>
  migrate(pool, {
    schema: "messaging",
    dir: migrationsDir,
    kitTables: ["signing_keys", "outbox", "operation_keys"],
  });
