import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { newId, type Pool } from "@switchboard/kit";
import type { Dispatcher } from "@switchboard/webhook/dispatch";

/** Child processes and fixtures of the delivery benchmark. */
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

export interface Child {
  process: ChildProcess;
  stop(): Promise<void>;
}

/** Forks a compiled module and waits for its first message. */
export async function forkChild<T>(
  file: string,
  env: Record<string, string>,
): Promise<{ child: Child; first: T }> {
  const processHandle = fork(here(file), [], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    // e.g. BENCH_EXEC_ARGV="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the children
    execArgv: (process.env.BENCH_EXEC_ARGV ?? "").split(" ").filter(Boolean),
  });
  const first = await new Promise<T>((resolve, reject) => {
    processHandle.once("message", (message) => resolve(message as T));
    processHandle.once("exit", (code) => reject(new Error(`${file} exited early (${code})`)));
  });
  return {
    child: {
      process: processHandle,
      stop: () =>
        new Promise<void>((resolve) => {
          if (processHandle.exitCode !== null) return resolve();
          processHandle.once("exit", () => resolve());
          processHandle.kill("SIGTERM");
        }),
    },
    first,
  };
}

export const workerFile = import.meta.resolve("@switchboard/webhook/worker-main");
export const receiverFile = "./receiver-process.js";

/** Inserts `count` pending deliveries of one subscription and queues a job for each. */
export async function queueDeliveries(
  pool: Pool,
  dispatcher: Dispatcher,
  subscriptionId: string,
  accountId: string,
  count: number,
): Promise<void> {
  const ids = Array.from({ length: count }, () => newId("wdl"));
  const events = ids.map(() => newId("evt"));
  for (let i = 0; i < count; i += 5_000) {
    const slice = ids.slice(i, i + 5_000);
    const payloads = events.slice(i, i + 5_000).map((id, j) =>
      JSON.stringify({
        id,
        type: "call.completed",
        timestamp: new Date().toISOString(),
        account_id: accountId,
        sequence: i + j + 1,
        data: {
          call_id: `call_bench_${i + j}`,
          duration_seconds: 42,
          hangup_cause: "normal_clearing",
        },
      }),
    );
    await pool.query(
      `INSERT INTO webhook.deliveries
         (id, account_id, subscription_id, event_id, event_type, payload, status, next_attempt_at)
       SELECT d.id, $3, $4, d.event_id, 'call.completed', d.payload, 'pending', now()
         FROM unnest($1::text[], $2::text[], $5::text[]) AS d (id, event_id, payload)`,
      [slice, events.slice(i, i + 5_000), accountId, subscriptionId, payloads],
    );
  }
  for (let i = 0; i < count; i += 1_000) {
    await dispatcher.dispatchAll(
      ids.slice(i, i + 1_000).map((id) => ({ id, dispatch: 1, eventType: "call.completed" })),
    );
  }
}
