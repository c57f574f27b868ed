import { fileURLToPath } from "node:url";
import { migrate, type Pool } from "@switchboard/kit";

/**
 * `gateway/migrations`, two levels up from this module: the same from `src/auth/*.ts` (tests,
 * tsx) and from `dist/auth/*.js` (built).
 */
export const gatewayMigrationsDir = fileURLToPath(new URL("../../migrations", import.meta.url));

/** Applies the gateway's migrations to its own schema `gateway`; returns the names applied. */
export function migrateGateway(
  pool: Pool,
  options: { log?: (message: string) => void } = {},
): Promise<string[]> {
  return migrate(pool, {
    schema: "gateway",
    dir: gatewayMigrationsDir,
    kitTables: ["signing_keys"],
    ...(options.log ? { log: options.log } : {}),
  });
}
