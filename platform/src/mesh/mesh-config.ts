import { loadConfig } from "@switchboard/kit";
import { z } from "zod";
import { meshComponents, type MeshComponentName } from "./mesh-components.js";
import { defaultMeshPorts, type MeshPorts } from "./mesh-ports.js";
import type { MeshOptions } from "./start-mesh.js";

const port = (fallback: number) => z.coerce.number().int().min(1).max(65_535).default(fallback);
const adminVariable = (name: MeshComponentName) =>
  `${name.toUpperCase().replace(/-/g, "_")}_ADMIN_PORT`;
const defaults = defaultMeshPorts();
const required = (message: string, pattern: RegExp) =>
  z.string({ error: message }).regex(pattern, message);

export const meshSettings = z.object({
  DATABASE_URL: required(
    "DATABASE_URL is required (a postgres:// URL)",
    /^postgres(ql)?:\/\//,
  ).describe("PostgreSQL (required; each service uses its own schema)"),
  REDIS_URL: required("REDIS_URL is required (a redis:// URL)", /^rediss?:\/\//).describe(
    "Redis: queues, rate-limit buckets (required)",
  ),
  REDIS_QUEUE_PREFIX: z
    .string()
    .min(1)
    .max(100)
    .default("sb")
    .describe("Redis key prefix of every queue; every process gets the same one"),
  WEBHOOK_SINK_PORT: port(defaults.webhookSink).describe("the webhook service's internal sink"),
  MESH_RESTART_BACKOFF_MS: z.coerce
    .number()
    .int()
    .min(10)
    .max(60_000)
    .default(500)
    .describe("first restart delay of a process that exits"),
  ...Object.fromEntries(
    meshComponents.flatMap((c) => [
      [
        c.portVariable,
        port(c.defaultPort).describe(
          c.addressVariable
            ? `${c.name} gRPC port; every process is given ${c.addressVariable}=127.0.0.1:<port>`
            : `${c.name} HTTP port`,
        ),
      ],
      [
        adminVariable(c.name),
        port(c.defaultAdminPort).describe(`${c.name} admin port, given to it as ADMIN_PORT`),
      ],
    ]),
  ),
});

/**
 * `npm run mesh` settings: the stores (required), the queue prefix, and every port — the
 * gateway's PORT, each service's <NAME>_GRPC_PORT, WEBHOOK_SINK_PORT and <NAME>_ADMIN_PORT —
 * defaulting to the well-known ones. Everything else in the environment reaches every process.
 */
export function loadMeshOptions(source: NodeJS.ProcessEnv = process.env): MeshOptions {
  const config = loadConfig(meshSettings, source) as Record<string, unknown> &
    z.infer<typeof meshSettings>;
  const byName = (variable: (c: (typeof meshComponents)[number]) => string) =>
    Object.fromEntries(meshComponents.map((c) => [c.name, Number(config[variable(c)])])) as Record<
      MeshComponentName,
      number
    >;
  const ports: MeshPorts = {
    listen: byName((c) => c.portVariable),
    admin: byName((c) => adminVariable(c.name)),
    webhookSink: config.WEBHOOK_SINK_PORT,
  };
  return {
    databaseUrl: config.DATABASE_URL,
    redisUrl: config.REDIS_URL,
    queuePrefix: config.REDIS_QUEUE_PREFIX,
    ports,
    env: source,
    restartBackoff: { initialMs: config.MESH_RESTART_BACKOFF_MS, maxMs: 30_000 },
  };
}
