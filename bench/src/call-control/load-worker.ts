import { parentPort, workerData } from "node:worker_threads";
import { threadCpuMs } from "../cpu-time.js";
import { closedLoop } from "./load.js";

/**
 * The load generator on its own thread (its own event loop and core), so the requests it
 * builds and the responses it reads do not compete with the platform it measures.
 */
export interface LoadWorkerInput {
  /** Names this load's Idempotency-Keys apart from another load's (the warm-up's). */
  label: string;
  url: string;
  token: string;
  concurrency: number;
  warmupMs: number;
  measureMs: number;
  callers: string[];
  agent: string;
  to: string;
}

const input = workerData as LoadWorkerInput;
let sequence = 0;
const result = await closedLoop({
  url: input.url,
  concurrency: input.concurrency,
  warmupMs: input.warmupMs,
  measureMs: input.measureMs,
  next: (worker) => {
    sequence += 1;
    return {
      headers: {
        Authorization: `Bearer ${input.token}`,
        "Content-Type": "application/json",
        "Idempotency-Key": `bench-${input.label}-${worker}-${sequence}`,
      },
      body: JSON.stringify({
        to: input.to,
        from: input.callers[sequence % input.callers.length],
        agent: input.agent,
        client_state: `n${sequence}`,
      }),
    };
  },
});
// This thread's CPU time, from its start, to be left out of the platform's.
parentPort?.postMessage({
  seconds: result.seconds,
  latencies: [...result.latencies.entries()],
  generatorCpuMs: threadCpuMs(),
});
