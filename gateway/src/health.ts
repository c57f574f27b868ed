import {
  checkHealth,
  isDatabaseReady,
  worstOf,
  type CheckState,
  type Pool,
  type ReadinessReport,
} from "@switchboard/kit";
import type { Backends } from "./backends.js";

export type { CheckState };

export interface HealthReport {
  status: CheckState;
  version: string;
  checks: Record<string, CheckState>;
}

export interface HealthReporter {
  /** `GET /api/health`: anything not passing is `warn`; only shutting down is `fail`. */
  report(): Promise<HealthReport>;
  /**
   * The admin port's `/readyz`: PostgreSQL or a backend not SERVING fails it; the extra checks
   * (Redis) can only warn, since the rate limits fail open without Redis.
   */
  readiness(): Promise<ReadinessReport>;
  /** From SIGTERM on, health answers 503 fail so load balancers stop routing here. */
  markShuttingDown(): void;
}

/** Extra checks (e.g. redis) registered by later layers; each answers pass or warn. */
export type ExtraCheck = () => Promise<CheckState>;

const componentName = (service: string) => service.replace(/-/g, "_");

/**
 * Redacted health: component states only, never hosts, errors or timings. `report` keeps the
 * public `/api/health` contract (a backend that is not ready makes it `warn`); `readiness` is
 * the strict view of the same checks.
 */
export function createHealthReporter(options: {
  version: string;
  pool: Pool;
  backends: Backends;
  extraChecks?: Record<string, ExtraCheck>;
}): HealthReporter {
  let shuttingDown = false;
  const probe = async (): Promise<Record<string, CheckState>> => {
    const entries: [string, Promise<CheckState>][] = [
      ["postgres", isDatabaseReady(options.pool).then((ready) => (ready ? "pass" : "fail"))],
      ...Object.entries(options.extraChecks ?? {}).map(
        ([name, check]) =>
          [name, check().then(softOnly, () => "warn" as const)] as [string, Promise<CheckState>],
      ),
      ...options.backends
        .all()
        .map(
          (backend) =>
            [
              componentName(backend.name),
              checkHealth(backend.health).then((s) => (s === "SERVING" ? "pass" : "fail")),
            ] as [string, Promise<CheckState>],
        ),
    ];
    const states = await Promise.all(entries.map(([, state]) => state));
    const checks: Record<string, CheckState> = { gateway: shuttingDown ? "fail" : "pass" };
    entries.forEach(([name], index) => (checks[name] = states[index] as CheckState));
    return checks;
  };
  return {
    markShuttingDown: () => {
      shuttingDown = true;
    },
    report: async () => {
      const checks = await probe();
      for (const name of Object.keys(checks)) {
        if (name !== "gateway" && checks[name] === "fail") checks[name] = "warn";
      }
      const states = Object.values(checks);
      const status: CheckState = shuttingDown ? "fail" : states.includes("warn") ? "warn" : "pass";
      return { status, version: options.version, checks };
    },
    readiness: async () => {
      const checks = await probe();
      return { status: worstOf(Object.values(checks)), checks };
    },
  };
}

/** An extra check never fails readiness (the gateway serves without it). */
const softOnly = (state: CheckState): CheckState => (state === "fail" ? "warn" : state);
