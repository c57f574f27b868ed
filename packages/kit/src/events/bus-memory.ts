import type { Logger } from "pino";
import { backoffDelay } from "./backoff.js";
import type {
  ConsumeOptions,
  EventBus,
  JobCounts,
  JobHandler,
  JobInput,
  PublishOptions,
  QueueWorker,
} from "./bus.js";
import {
  assertJobId,
  assertQueueName,
  attemptsFor,
  isUnrecoverable,
  retryAfterOf,
  jobTracing,
  runJobAttempt,
  toStoredJobData,
  type StoredJobData,
} from "./job-runtime.js";
import { trackQueueDepth } from "../metrics/queues.js";

/**
 * The in-process bus for the embedded mode: the same semantics as the BullMQ bus (job-id dedupe
 * while the job is retained, delays, attempts, the shared backoff function, unrecoverable
 * errors, concurrency, competing workers, draining close), kept in memory. It is not durable:
 * jobs waiting or scheduled for retry when the process stops are gone.
 */
export interface MemoryBusOptions {
  logger?: Logger;
  /** Finished jobs kept (for job-id dedupe and counts) per queue; the oldest go first. */
  retainCompleted?: number;
  retainFailed?: number;
}

type State = "waiting" | "delayed" | "active" | "completed" | "failed";

interface MemoryJob {
  id: string;
  name: string;
  data: StoredJobData;
  attempts: number;
  attemptsMade: number;
  state: State;
  /** When it last became waiting (ms). */
  waitingSince?: number;
  timer?: NodeJS.Timeout;
}

interface MemoryQueue {
  name: string;
  jobs: Map<string, MemoryJob>;
  waiting: MemoryJob[];
  workers: MemoryWorker[];
  finished: { completed: string[]; failed: string[] };
  dispatchScheduled: boolean;
  nextWorker: number;
}

interface MemoryWorker extends QueueWorker {
  free(): boolean;
  start(job: MemoryJob): void;
}

/** Tells one in-process bus's queues from another's (tests run several in one process). */
let memoryBuses = 0;

export function createMemoryBus(options: MemoryBusOptions = {}): EventBus {
  const queues = new Map<string, MemoryQueue>();
  const workers = new Set<QueueWorker>();
  const retain = {
    completed: options.retainCompleted ?? 10_000,
    failed: options.retainFailed ?? 10_000,
  };
  let autoId = 0;
  let closed = false;

  const queueOf = (name: string): MemoryQueue => {
    assertQueueName(name);
    let queue = queues.get(name);
    if (!queue) {
      queue = {
        name,
        jobs: new Map(),
        waiting: [],
        workers: [],
        finished: { completed: [], failed: [] },
        dispatchScheduled: false,
        nextWorker: 0,
      };
      queues.set(name, queue);
    }
    return queue;
  };

  const scheduleDispatch = (queue: MemoryQueue): void => {
    if (queue.dispatchScheduled) return;
    queue.dispatchScheduled = true;
    setImmediate(() => {
      queue.dispatchScheduled = false;
      while (queue.waiting.length > 0) {
        const count = queue.workers.length;
        let worker: MemoryWorker | undefined;
        for (let i = 0; i < count && !worker; i += 1) {
          const candidate = queue.workers[(queue.nextWorker + i) % count];
          if (candidate?.free()) {
            worker = candidate;
            queue.nextWorker = (queue.nextWorker + i + 1) % count;
          }
        }
        if (!worker) return;
        worker.start(queue.waiting.shift()!);
      }
    });
  };

  const makeAvailable = (queue: MemoryQueue, job: MemoryJob, delay: number): void => {
    if (delay > 0) {
      job.state = "delayed";
      // After close() no timer is armed: the bus is gone, as is any job it still held.
      if (!closed) job.timer = setTimeout(() => makeAvailable(queue, job, 0), delay).unref();
      return;
    }
    job.timer = undefined;
    job.state = "waiting";
    job.waitingSince = Date.now();
    queue.waiting.push(job);
    scheduleDispatch(queue);
  };

  const finish = (queue: MemoryQueue, job: MemoryJob, state: "completed" | "failed"): void => {
    job.state = state;
    const ids = queue.finished[state];
    ids.push(job.id);
    while (ids.length > retain[state]) queue.jobs.delete(ids.shift()!);
  };

  const runOne = async <T>(
    queue: MemoryQueue,
    job: MemoryJob,
    handler: JobHandler<T>,
    consume: ConsumeOptions<T>,
  ) => {
    const attempt = job.attemptsMade + 1;
    const stored = JSON.parse(JSON.stringify(job.data)) as StoredJobData<T>;
    const { payload, trace } = stored;
    const view = {
      id: job.id,
      queue: queue.name,
      name: job.name,
      data: payload,
      attempt,
      maxAttempts: job.attempts,
      ...(trace ? { trace } : {}),
    };
    try {
      await runJobAttempt(handler, view, jobTracing(stored), consume, options.logger);
      job.attemptsMade = attempt;
      finish(queue, job, "completed");
    } catch (error) {
      job.attemptsMade = attempt;
      if (isUnrecoverable(error) || attempt >= job.attempts) finish(queue, job, "failed");
      else makeAvailable(queue, job, backoffDelay(job.data.backoff, attempt, retryAfterOf(error)));
    }
  };

  const bus: EventBus = {
    kind: "memory",

    async publish<T>(name: string, input: JobInput<T>, opts: PublishOptions = {}) {
      if (closed) throw new Error("the event bus is closed");
      const queue = queueOf(name);
      if (opts.jobId !== undefined) assertJobId(opts.jobId);
      const id = opts.jobId ?? `m${(autoId += 1)}`;
      if (queue.jobs.has(id)) return { id };
      const job: MemoryJob = {
        id,
        name: input.name,
        data: toStoredJobData(input, opts.backoff),
        attempts: attemptsFor(opts),
        attemptsMade: 0,
        state: "waiting",
      };
      queue.jobs.set(id, job);
      makeAvailable(queue, job, opts.delay ?? 0);
      return { id };
    },

    consume<T>(name: string, handler: JobHandler<T>, consume: ConsumeOptions<T> = {}): QueueWorker {
      if (closed) throw new Error("the event bus is closed");
      const queue = queueOf(name);
      const concurrency = Math.max(1, consume.concurrency ?? 1);
      const inFlight = new Set<Promise<void>>();
      let closing: Promise<void> | undefined;
      const worker: MemoryWorker = {
        queue: name,
        free: () => !closing && inFlight.size < concurrency,
        start(job) {
          job.state = "active";
          const run = runOne(queue, job, handler, consume).finally(() => {
            inFlight.delete(run);
            scheduleDispatch(queue);
          });
          inFlight.add(run);
        },
        close() {
          closing ??= (async () => {
            const index = queue.workers.indexOf(worker);
            if (index >= 0) queue.workers.splice(index, 1);
            while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
            workers.delete(worker);
          })();
          return closing;
        },
      };
      queue.workers.push(worker);
      workers.add(worker);
      depth.add(name);
      scheduleDispatch(queue);
      return worker;
    },

    async jobCounts(name: string): Promise<JobCounts> {
      const counts: JobCounts = { waiting: 0, active: 0, delayed: 0, completed: 0, failed: 0 };
      for (const job of queueOf(name).jobs.values()) counts[job.state] += 1;
      return counts;
    },

    async oldestWaitingSeconds(name: string) {
      const oldest = queueOf(name).waiting[0]?.waitingSince;
      return oldest === undefined ? 0 : (Date.now() - oldest) / 1000;
    },

    async isReady() {
      return !closed;
    },

    async close() {
      closed = true;
      depth.close();
      await Promise.all([...workers].map((worker) => worker.close()));
      for (const queue of queues.values()) {
        for (const job of queue.jobs.values()) if (job.timer) clearTimeout(job.timer);
      }
    },
  };
  // queue_jobs: the depth of the queues consumed here, read at scrape time.
  const depth = trackQueueDepth(
    `memory ${(memoryBuses += 1)}`,
    (queue) => bus.jobCounts(queue),
    (queue) => bus.oldestWaitingSeconds(queue),
  );
  return bus;
}
