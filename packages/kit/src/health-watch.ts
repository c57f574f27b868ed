import type { Logger } from "pino";
import { withTimeout } from "./metrics/registry.js";

/** pass: fine; warn: degraded but serving (e.g. a fail-open store); fail: not ready. */
export type CheckState = "pass" | "warn" | "fail";

export interface ReadinessReport {
  status: CheckState;
  checks: Record<string, CheckState>;
}

export type DependencyCheck = () => Promise<CheckState>;

export interface DependencyWatch {
  /** The last report; before the first check every dependency counts as failing. */
  current(): ReadinessReport;
  /** Checks now; callers arriving while a check runs share it. */
  check(): Promise<ReadinessReport>;
  stop(): void;
}

/** The worst state of a set of checks (an empty set passes). */
export function worstOf(states: Iterable<CheckState>): CheckState {
  let worst: CheckState = "pass";
  for (const state of states) {
    if (state === "fail") return "fail";
    if (state === "warn") worst = "warn";
  }
  return worst;
}

/**
 * Checks a process's dependencies every `intervalMs` while something fails (and on demand),
 * every `healthyIntervalMs` while all is well, and calls `onChange` when readiness (status other
 * than fail) flips, so a gRPC health status or a readiness probe follows the dependencies
 * instead of always saying SERVING. A check that throws or outlasts `timeoutMs` fails.
 */
export function watchDependencies(options: {
  checks: Record<string, DependencyCheck>;
  /** Between checks while a dependency fails or warns (default 2 s). */
  intervalMs?: number;
  /** Between checks while every dependency passes (default 10 s; probes also check on demand). */
  healthyIntervalMs?: number;
  timeoutMs?: number;
  onChange?: (report: ReadinessReport) => void;
  logger?: Logger;
}): DependencyWatch {
  const names = Object.keys(options.checks);
  const timeoutMs = options.timeoutMs ?? 1_500;
  let report: ReadinessReport = {
    status: "fail",
    checks: Object.fromEntries(names.map((name) => [name, "fail" as const])),
  };
  let ready: boolean | undefined;
  let running: Promise<ReadinessReport> | undefined;
  let stopped = false;

  const runChecks = async (): Promise<ReadinessReport> => {
    const states = await Promise.all(
      names.map(async (name) => {
        const check = options.checks[name]!;
        return (await withTimeout(check(), timeoutMs)) ?? "fail";
      }),
    );
    const checks = Object.fromEntries(names.map((name, i) => [name, states[i]!]));
    return { status: worstOf(states), checks };
  };

  const apply = (next: ReadinessReport) => {
    report = next;
    const nowReady = next.status !== "fail";
    if (stopped || nowReady === ready) return;
    const failing = names.filter((name) => next.checks[name] === "fail");
    if (ready !== undefined) {
      if (nowReady) options.logger?.info({ checks: next.checks }, "dependencies back: ready");
      else options.logger?.warn({ failing }, "dependency down: not ready");
    }
    ready = nowReady;
    options.onChange?.(next);
  };

  const intervalMs = options.intervalMs ?? 2_000;
  const healthyIntervalMs = Math.max(intervalMs, options.healthyIntervalMs ?? 10_000);
  let timer: NodeJS.Timeout | undefined;
  /** The next periodic check counts from the last one, whoever asked for it. */
  const schedule = () => {
    clearTimeout(timer);
    if (stopped) return;
    const next = report.status === "pass" ? healthyIntervalMs : intervalMs;
    timer = setTimeout(() => void check(), next);
    timer.unref();
  };

  const check = (): Promise<ReadinessReport> => {
    running ??= runChecks()
      .then((next) => {
        apply(next);
        return next;
      })
      .finally(() => {
        running = undefined;
        schedule();
      });
    return running;
  };

  schedule();
  return {
    current: () => report,
    check,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
