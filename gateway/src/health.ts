import { checkHealth, isDatabaseReady, type Pool } from "@switchboard/kit";
import type { Backends } from "./backends.js";

export type CheckState = "pass" | "warn" | "fail";

export interface HealthReport {
  status: CheckState;
  version: string;
  checks: Record<string, CheckState>;
}

export interface HealthReporter {
  report(): Promise<HealthReport>;
  /** From SIGTERM on, health answers 503 fail so load balancers stop routing here. */
  markShuttingDown(): void;
}

/** Extra checks (e.g. redis) registered by later layers; each answers pass or warn. */
export type ExtraCheck = () => Promise<CheckState>;

const componentName = (service: string) => service.replace(/-/g, "_");

/**
 * Redacted health: component states only, never hosts, errors or timings. A backend that is not
 * ready makes the whole report `warn`; only a gateway that is shutting down reports `fail`.
 */
export function createHealthReporter(options: {
  version: string;
  pool: Pool;
  backends: Backends;
  extraChecks?: Record<string, ExtraCheck>;
}): HealthReporter {
  let shuttingDown = false;
  return {
    markShuttingDown: () => {
      shuttingDown = true;
    },
    report: async () => {
      const entries: [string, Promise<CheckState>][] = [
        ["postgres", isDatabaseReady(options.pool).then((ready) => (ready ? "pass" : "warn"))],
        ...Object.entries(options.extraChecks ?? {}).map(
          ([name, check]) =>
            [name, check().catch(() => "warn" as const)] as [string, Promise<CheckState>],
        ),
        ...options.backends
          .all()
          .map(
            (backend) =>
              [
                componentName(backend.name),
                checkHealth(backend.health).then((s) => (s === "SERVING" ? "pass" : "warn")),
              ] as [string, Promise<CheckState>],
          ),
      ];
      const states = await Promise.all(entries.map(([, state]) => state));
      const checks: Record<string, CheckState> = { gateway: shuttingDown ? "fail" : "pass" };
      entries.forEach(([name], index) => (checks[name] = states[index] as CheckState));
      const status: CheckState = shuttingDown ? "fail" : states.includes("warn") ? "warn" : "pass";
      return { status, version: options.version, checks };
    },
  };
}
