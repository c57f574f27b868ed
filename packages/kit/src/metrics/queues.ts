import { Counter, Gauge } from "prom-client";
import { metricsRegistry, withTimeout } from "./registry.js";

/** The job states `queue_jobs` reports (finished jobs are counted by `queue_jobs_processed_total`). */
const depthStates = ["waiting", "active", "delayed", "failed"] as const;

export type QueueDepth = Record<(typeof depthStates)[number], number>;

interface DepthSource {
  /** Queues with the same scope and name are the same queue (one Redis prefix, one bus). */
  scope: string;
  queues: Set<string>;
  counts(queue: string): Promise<QueueDepth>;
  oldest(queue: string): Promise<number>;
}

const sources = new Set<DepthSource>();

/** How long a scrape waits for one queue's counts before leaving it out. */
const countTimeoutMs = 500;

new Gauge({
  name: "queue_jobs",
  help: "Jobs in the queues this process consumes, by state, read when scraped",
  labelNames: ["queue", "state"] as const,
  registers: [metricsRegistry],
  async collect() {
    const pending = new Map<string, Promise<[string, QueueDepth | undefined]>>();
    for (const source of sources) {
      for (const queue of source.queues) {
        const key = `${source.scope}\u0000${queue}`;
        if (!pending.has(key)) {
          pending.set(
            key,
            withTimeout(source.counts(queue), countTimeoutMs).then((depth) => [queue, depth]),
          );
        }
      }
    }
    const results = await Promise.all(pending.values());
    this.reset();
    for (const [queue, depth] of results) {
      if (!depth) continue;
      for (const state of depthStates) this.inc({ queue, state }, depth[state]);
    }
  },
});

new Gauge({
  name: "queue_oldest_waiting_seconds",
  help: "Age of the oldest job waiting in each queue this process consumes (0: none waits), read when scraped",
  labelNames: ["queue"] as const,
  registers: [metricsRegistry],
  async collect() {
    const pending = new Map<string, Promise<[string, number | undefined]>>();
    for (const source of sources) {
      for (const queue of source.queues) {
        const key = `${source.scope}\u0000${queue}`;
        if (!pending.has(key)) {
          pending.set(
            key,
            withTimeout(source.oldest(queue), countTimeoutMs).then((age) => [queue, age]),
          );
        }
      }
    }
    const results = await Promise.all(pending.values());
    this.reset();
    for (const [queue, age] of results) if (age !== undefined) this.set({ queue }, age);
  },
});

/**
 * Reports the depth of the queues a bus consumes in this process: `add` a queue when a worker
 * starts on it, `close` when the bus closes. Counts are read lazily, at scrape time.
 */
export function trackQueueDepth(
  scope: string,
  counts: (queue: string) => Promise<QueueDepth>,
  oldest: (queue: string) => Promise<number>,
): { add(queue: string): void; close(): void } {
  const source: DepthSource = { scope, queues: new Set(), counts, oldest };
  sources.add(source);
  return {
    add: (queue) => void source.queues.add(queue),
    close: () => void sources.delete(source),
  };
}

const jobsProcessed = new Counter({
  name: "queue_jobs_processed_total",
  help: "Job tries finished by this process's workers: completed, retry (another try follows) or failed (final)",
  labelNames: ["queue", "outcome"] as const,
  registers: [metricsRegistry],
});

export type JobOutcome = "completed" | "retry" | "failed";

export function countJobOutcome(queue: string, outcome: JobOutcome): void {
  jobsProcessed.inc({ queue, outcome });
}
