import { collectDefaultMetrics, Registry } from "prom-client";

/**
 * The process's one Prometheus registry: every series of this process, served at the admin
 * port's `/metrics`. Default process and Node.js metrics use their standard names
 * (`process_cpu_seconds_total`, `nodejs_eventloop_lag_seconds`, …), no prefix.
 */
export const metricsRegistry = new Registry();
// The event-loop lag histogram samples every 100 ms instead of prom-client's 10 ms: at 10 ms it
// alone woke an idle process 100 times a second (docs/benchmarks.md, idle cost).
collectDefaultMetrics({ register: metricsRegistry, eventLoopMonitoringPrecision: 100 });

/** Latency buckets in seconds shared by the request histograms (5 ms to 10 s). */
export const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Resolves `work`, or `undefined` once `timeoutMs` has passed (scrapes never hang). */
export function withTimeout<T>(work: Promise<T>, timeoutMs: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), timeoutMs);
    timer.unref();
  });
  return Promise.race([work.catch(() => undefined), timeout]).finally(() => clearTimeout(timer));
}
