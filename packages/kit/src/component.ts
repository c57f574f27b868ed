import type { Logger } from "pino";
import { z } from "zod";
import type { ReadinessReport } from "./health-watch.js";
import type { Pool } from "./db.js";
import type { EventBus } from "./events/bus.js";

/** What every backend service gets from whoever starts it (the mesh runner or the platform). */
export interface ComponentDeps {
  pool: Pool;
  bus: EventBus;
  logger: Logger;
  host: string;
  port: number;
  /** The gRPC address of each service this one calls (`needs`), by component name. */
  addresses: Record<string, string>;
  /** True in its own process: a SIGTERM drains (call-control lets live calls run on). */
  ownProcess: boolean;
  /**
   * The Redis every replica shares (mesh mode), for state the replicas must agree on beyond the
   * queues (the SMSC's submit rate); keys start with `prefix`. Undefined in embedded mode.
   */
  redis?: { url: string; prefix: string };
}

export interface RunningComponent {
  port: number;
  /** Drives grpc.health.v1 and the admin port's /readyz. */
  readiness(): Promise<ReadinessReport>;
  stop(): Promise<void>;
  /** Time `stop` may take beyond SHUTDOWN_GRACE_MS (call-control's call drain). */
  drainMs?: number;
  /** What the service's own start function returned (tests reach into it). */
  instance: unknown;
}

/**
 * One backend service, declared once in its own package (docs/architecture.md rule 11). The
 * mesh runner (`runComponent`), the embedded platform, the mesh supervisor, the gateway's
 * addresses and the chart checks all derive from these declarations.
 */
export interface ComponentDeclaration<Settings = unknown, Name extends string = string> {
  name: Name;
  /** The default gRPC port (its own process); <NAME>_GRPC_PORT overrides it. */
  grpcPort: number;
  /** The default admin port (/metrics, /livez, /readyz); ADMIN_PORT overrides it. */
  adminPort: number;
  /** Names of the services it calls; their addresses come from <NAME>_ADDR. */
  needs: readonly string[];
  /** Its database pool size when DATABASE_POOL_SIZE is unset. */
  poolSize: number;
  /** Its own settings, read from the environment (documented in docs/configuration.md). */
  settings: z.ZodType<Settings>;
  /** Defaults that apply only in its own process (e.g. the webhook sink's well-known port). */
  ownProcessDefaults?: Record<string, string>;
  start(deps: ComponentDeps, settings: Settings): Promise<RunningComponent>;
}

/** What a service's start function returns, as a running component. */
export const runningComponent = (service: {
  port: number;
  health: { check(): Promise<ReadinessReport> };
  stop(): Promise<void>;
}): RunningComponent => ({
  port: service.port,
  instance: service,
  readiness: () => service.health.check(),
  stop: () => service.stop(),
});

/** Declares a component, keeping its settings type tied to its start function. */
export const defineComponent = <Settings, const Name extends string>(
  declaration: ComponentDeclaration<Settings, Name>,
): ComponentDeclaration<Settings, Name> => declaration;

const variablePrefix = (name: string) => name.toUpperCase().replace(/-/g, "_");

/** The variable a service's callers read its gRPC address from: `call-control` → CALL_CONTROL_ADDR. */
export const addressVariable = (name: string) => `${variablePrefix(name)}_ADDR`;
/** The variables a service reads its gRPC listen address from. */
export const grpcPortVariable = (name: string) => `${variablePrefix(name)}_GRPC_PORT`;
export const grpcHostVariable = (name: string) => `${variablePrefix(name)}_GRPC_HOST`;
