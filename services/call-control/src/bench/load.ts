import { Agent, request } from "node:http";

/** Latency statistics in milliseconds. */
export interface Stats {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  mean: number;
  max: number;
}

const round = (value: number) => Math.round(value * 1000) / 1000;
const percentile = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;

export function summarize(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: round(percentile(sorted, 50)),
    p90: round(percentile(sorted, 90)),
    p99: round(percentile(sorted, 99)),
    p999: round(percentile(sorted, 99.9)),
    mean: round(sorted.reduce((sum, v) => sum + v, 0) / Math.max(1, sorted.length)),
    max: round(sorted.at(-1) ?? 0),
  };
}

export interface LoadResult {
  /** Seconds the measured window lasted. */
  seconds: number;
  /** Latency of every measured request, by status. */
  latencies: Map<number, number[]>;
}

/**
 * A closed-loop load: `concurrency` workers, each on its own kept-alive connection, each
 * sending the next request as soon as the previous one answered, for `warmupMs` (not
 * measured) and then `measureMs`.
 */
export async function closedLoop(options: {
  url: string;
  concurrency: number;
  warmupMs: number;
  measureMs: number;
  next: (worker: number) => { headers: Record<string, string>; body: string };
}): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const latencies = new Map<number, number[]>();
  const started = performance.now();
  const measureFrom = started + options.warmupMs;
  const stopAt = measureFrom + options.measureMs;
  const send = (init: { headers: Record<string, string>; body: string }) =>
    new Promise<{ status: number; ms: number }>((resolve, reject) => {
      const t0 = process.hrtime.bigint();
      const req = request(options.url, { method: "POST", headers: init.headers, agent }, (res) => {
        res.resume();
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, ms: Number(process.hrtime.bigint() - t0) / 1e6 }),
        );
        res.on("error", reject);
      });
      req.on("error", reject);
      req.end(init.body);
    });
  const worker = async (index: number) => {
    for (;;) {
      const sentAt = performance.now();
      if (sentAt >= stopAt) return;
      const { status, ms } = await send(options.next(index));
      if (sentAt >= measureFrom) {
        const list = latencies.get(status) ?? [];
        list.push(ms);
        latencies.set(status, list);
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, (_, i) => worker(i)));
  const finishedAt = performance.now();
  agent.destroy();
  // Requests sent in the window, over the time until the last of them was answered.
  return { seconds: (finishedAt - measureFrom) / 1000, latencies };
}
