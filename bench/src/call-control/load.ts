import { Agent, request } from "node:http";

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
