import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { closeClient, timedRequest, type TimedRequest } from "./http-client.js";

type Job = { id: number } & TimedRequest;
type Outcome = { id: number } & ({ status: number; ms: number } | { error: string });

const ROLE = "policies-bench-client";

export interface ClientThread {
  /** One request timed in the client thread: its own event loop, as a separate client's. */
  request(request: TimedRequest): Promise<{ status: number; ms: number }>;
  close(): Promise<void>;
}

/**
 * The benchmark's HTTP client on a thread of its own. With the client on the servers' event
 * loop, what a server does after its reply (the stored-response write) and the client's own
 * parsing would queue on one thread and land on the measured time.
 */
export function startClientThread(): ClientThread {
  const worker = new Worker(new URL(import.meta.url), { workerData: { role: ROLE } });
  const pending = new Map<number, (outcome: Outcome) => void>();
  let next = 0;
  worker.on("message", (outcome: Outcome) => {
    pending.get(outcome.id)?.(outcome);
    pending.delete(outcome.id);
  });
  return {
    request: (request) =>
      new Promise((resolve, reject) => {
        const id = (next += 1);
        pending.set(id, (outcome) =>
          "error" in outcome ? reject(new Error(outcome.error)) : resolve(outcome),
        );
        worker.postMessage({ id, ...request } satisfies Job);
      }),
    close: async () => {
      await worker.terminate();
    },
  };
}

if (!isMainThread && (workerData as { role?: string } | null)?.role === ROLE) {
  const port = parentPort!;
  port.on("message", ({ id, ...request }: Job) => {
    timedRequest(request).then(
      ({ status, ms }) => port.postMessage({ id, status, ms } satisfies Outcome),
      (error: unknown) => port.postMessage({ id, error: String(error) } satisfies Outcome),
    );
  });
  port.once("close", closeClient);
}
