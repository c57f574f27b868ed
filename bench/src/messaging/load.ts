import { Worker } from "node:worker_threads";

/** A consenting recipient of the benchmark's sends. */
export interface Recipient {
  to: string;
  consentId: string;
}

/**
 * One load: `count` sends, `concurrency` in flight, either through the gateway (HTTP, mode
 * "gateway") or straight to the messaging service (gRPC, mode "service"). `label` names its
 * Idempotency-Keys and its texts' codes apart from another load's.
 */
export interface LoadInput {
  mode: "gateway" | "service";
  label: "warm" | "svc" | "run";
  count: number;
  concurrency: number;
  url: string;
  token: string;
  accountId: string;
  grpcAddress: string;
  senders: string[];
  recipients: Recipient[];
  templateId: string;
}

export interface LoadResult {
  /** Each send's latency in ms, in the order they were sent. */
  latencies: Float64Array;
  /** Answers by HTTP status (or gRPC outcome: `OK` or the error's kind). */
  statuses: Record<string, number>;
  /** The ids of the accepted messages. */
  ids: string[];
  elapsedMs: number;
  /** The load generator's thread's CPU time, to be left out of the platform's. */
  generatorCpuMs: number;
}

/** Runs one load on a worker thread of its own (load-worker.ts). */
export function load(input: LoadInput): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./load-worker.js", import.meta.url), { workerData: input });
    worker.once("message", (result: LoadResult) => resolve(result));
    worker.once("error", reject);
    worker.once("exit", (code) => {
      if (code !== 0) reject(new Error(`the load worker exited with ${code}`));
    });
  });
}
