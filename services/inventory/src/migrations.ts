import { fileURLToPath } from "node:url";
import { migrate, type Pool } from "@switchboard/kit";

/** SQL migrations ship beside src/ and dist/ (both one level below the package root). */
export const migrationsDir = fileURLToPath(new URL("../migrations", import.meta.url));

/** Applies the inventory's migrations to its `inventory` schema; returns the names applied. */
export const migrateInventory = (pool: Pool): Promise<string[]> =>
  migrate(pool, { schema: "inventory", dir: migrationsDir, kitTables: ["operation_keys"] });
