import type { EventBus, Logger, Pool } from "@switchboard/kit";

/** What every backend service gets from the composition that starts it. */
export interface ComponentDeps {
  pool: Pool;
  bus: EventBus;
  logger: Logger;
  host: string;
  port: number;
  /** Addresses of the services started before this one (by their address variable). */
  addresses: Record<string, string>;
  /** The environment the service reads its settings from (tests compress timers here). */
  env: NodeJS.ProcessEnv;
}

export interface RunningComponent {
  port: number;
  stop(): Promise<void>;
}

/**
 * One backend service as the embedded mode and the tests start it: the same gRPC server on a
 * real socket as in the mesh mode. The gateway finds it through `addressVariable`.
 */
export interface ServiceComponent {
  name: string;
  /** The gateway's environment variable naming this service's gRPC address. */
  addressVariable: string;
  start(deps: ComponentDeps): Promise<RunningComponent>;
}
