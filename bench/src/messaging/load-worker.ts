import { parentPort, workerData } from "node:worker_threads";
import { threadCpuMs } from "../cpu-time.js";
import type { LoadInput, LoadResult } from "./load.js";
import { grpcSender, httpSender } from "./senders.js";

/**
 * The load generator, on its own thread (its own event loop and core): `count` sends with
 * `concurrency` in flight. It reports its own thread's CPU time, from its start, to be left out
 * of the platform's.
 */
const input = workerData as LoadInput;
const { count, concurrency } = input;
const latencies = new Float64Array(count);
const statuses: Record<string, number> = {};
const ids: string[] = [];
const send = input.mode === "service" ? await grpcSender(input) : httpSender(input);
let next = 0;
const started = process.hrtime.bigint();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < count) {
      const index = next++;
      const begun = process.hrtime.bigint();
      const { status, id } = await send.one(index);
      latencies[index] = Number(process.hrtime.bigint() - begun) / 1e6;
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (id) ids.push(id);
    }
  }),
);
const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
send.close();
const result: LoadResult = {
  latencies,
  statuses,
  ids,
  elapsedMs,
  generatorCpuMs: threadCpuMs(),
};
parentPort?.postMessage(result);
