import { meshServices, type MeshComponent, type MeshComponentName } from "./mesh-components.js";
import type { MeshPorts } from "./mesh-ports.js";

/** OpenTelemetry preloaded before each entry (configured by the standard OTEL_* variables). */
export const preloadArgs = ["--import", "@switchboard/kit/telemetry/register"];

export interface MeshStores {
  databaseUrl: string;
  redisUrl: string;
  /** Redis key prefix of every queue of this mesh (REDIS_QUEUE_PREFIX). */
  queuePrefix: string;
}

/** Every service's address, by the variable its callers read (INVENTORY_ADDR, …). */
export function meshAddresses(ports: MeshPorts, host = "127.0.0.1"): Record<string, string> {
  return Object.fromEntries(
    meshServices.map((s) => [s.addressVariable!, `${host}:${ports.listen[s.name]}`]),
  );
}

/** One process's environment: the shared one, the stores, the addresses, its own ports. */
export function childEnv(
  component: MeshComponent,
  options: {
    base: NodeJS.ProcessEnv;
    stores: MeshStores;
    ports: MeshPorts;
    own?: Record<string, string> | undefined;
  },
): NodeJS.ProcessEnv {
  const { stores, ports } = options;
  return {
    ...options.base,
    DATABASE_URL: stores.databaseUrl,
    REDIS_URL: stores.redisUrl,
    REDIS_QUEUE_PREFIX: stores.queuePrefix,
    ...meshAddresses(ports),
    [component.portVariable]: String(ports.listen[component.name]),
    ADMIN_PORT: String(ports.admin[component.name]),
    ...(component.name === "webhook" ? { WEBHOOK_SINK_PORT: String(ports.webhookSink) } : {}),
    ...options.own,
  };
}

/**
 * How long the supervisor lets a SIGTERM take before SIGKILL: the process's own grace
 * (SHUTDOWN_GRACE_MS, default 25 s; call-control adds CALL_DRAIN_SECONDS, default 60) and 5 s.
 */
export function stopTimeoutMs(name: MeshComponentName, env: NodeJS.ProcessEnv): number {
  const grace = Number(env.SHUTDOWN_GRACE_MS) || 25_000;
  const drainSeconds = env.CALL_DRAIN_SECONDS === undefined ? 60 : Number(env.CALL_DRAIN_SECONDS);
  const drain = name === "call-control" ? (Number.isFinite(drainSeconds) ? drainSeconds : 60) : 0;
  return grace + drain * 1000 + 5_000;
}
