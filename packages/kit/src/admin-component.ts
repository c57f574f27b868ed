import type { Logger } from "pino";
import { z } from "zod";
import { startAdminServer, type RunningAdminServer } from "./admin-server.js";
import { env, loadConfig } from "./config.js";
import { recordBuildInfo } from "./metrics/build-info.js";

/** ADMIN_PORT (default per component, see docs/configuration.md) and ADMIN_HOST (default `127.0.0.1`). */
export function loadAdminAddress(
  defaults: { port: number; host?: string },
  source: NodeJS.ProcessEnv = process.env,
): { host: string; port: number } {
  const parsed = loadConfig(
    z.object({
      ADMIN_PORT: env.port(defaults.port),
      ADMIN_HOST: z
        .string()
        .min(1)
        .default(defaults.host ?? "127.0.0.1"),
    }),
    source,
  );
  return { host: parsed.ADMIN_HOST, port: parsed.ADMIN_PORT };
}

/**
 * The admin port of one process (a mesh component, or the embedded platform): listens on
 * ADMIN_HOST:ADMIN_PORT and marks `component` in `switchboard_build_info`. Start it before the
 * component so /livez answers during migrations; /readyz answers 503 until `setReady`.
 */
export async function startComponentAdmin(options: {
  component: string;
  defaultPort: number;
  defaultHost?: string;
  logger: Logger;
  env?: NodeJS.ProcessEnv;
}): Promise<RunningAdminServer> {
  const address = loadAdminAddress(
    {
      port: options.defaultPort,
      ...(options.defaultHost !== undefined ? { host: options.defaultHost } : {}),
    },
    options.env,
  );
  recordBuildInfo(options.component);
  return startAdminServer({ ...address, logger: options.logger });
}
