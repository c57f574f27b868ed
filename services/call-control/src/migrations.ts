import { fileURLToPath } from "node:url";
import { migrate, type Pool } from "@switchboard/kit";

/** SQL migrations ship beside src/ and dist/ (both one level below the package root). */
export const migrationsDir = fileURLToPath(new URL("../migrations", import.meta.url));

/** Applies call-control's migrations to its `call_control` schema; returns the names applied. */
export const migrateCallControl = (pool: Pool): Promise<string[]> =>
  migrate(pool, {
    schema: "call_control",
    dir: migrationsDir,
    kitTables: ["signing_keys", "outbox", "operation_keys"],
  });
