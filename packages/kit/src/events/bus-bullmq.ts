import { Queue, Worker, type Job as BullJob, type JobsOptions } from "bullmq";
import { Redis } from "ioredis";
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
  jobTracing,
  retryAfterOf,
  runJobAttempt,
  toStoredJobData,
  type StoredJobData,
} from "./job-runtime.js";
import { trackQueueDepth } from "../metrics/queues.js";

/**
 * The mesh-mode bus: BullMQ on Redis. Producers share one ioredis connection (default
 * `maxRetriesPerRequest`, so a publish fails instead of hanging while Redis is away); each
 * worker gets its own connection with `maxRetriesPerRequest: null`, as BullMQ requires for its
 * blocking commands. Retries use BullMQ's custom `backoffStrategy` (job opts
 * `backoff: {type: "switchboard"}`) reading our Backoff from the job data, so the delays are
 * those of `backoffDelay`. A handler's UnrecoverableJobError is named "UnrecoverableError",
 * which BullMQ honours by name.
 */
export interface BullmqBusOptions {
  redisUrl: string;
  /** Redis key prefix (default `sb`). */
  prefix?: string;
  logger?: Logger;
  /** Finished jobs kept: the job-id dedupe window. Age in seconds. */
  keepCompleted?: { age: number; count: number };
  keepFailed?: { age: number; count: number };
  /**
   * A job whose worker died is retried after `stalledIntervalMs`; after `maxStalledCount`
   * stalls it fails. The default (5, not BullMQ's 1) favours "nothing lost".
   */
  stalledIntervalMs?: number;
  maxStalledCount?: number;
  /**
   * How long a worker's lock on an active job lasts without renewal (BullMQ default 30 s): a
   * dead worker's job counts as stalled only once its lock has expired.
   */
  lockDurationMs?: number;
}

export interface BullmqBus extends EventBus {
  readonly kind: "bullmq";
  /** Deletes a queue and all its jobs (tests, decommissioning). */
  obliterate(queue: string): Promise<void>;
}

const backoffType = "switchboard";

export function createBullmqBus(options: BullmqBusOptions): BullmqBus {
  const prefix = options.prefix ?? "sb";
  const logger = options.logger;
  const onError = (what: string) => (error: unknown) =>
    logger?.warn({ err: error, what }, "redis error");
  const producer = new Redis(options.redisUrl, { lazyConnect: false });
  producer.on("error", onError("producer"));
  const queues = new Map<string, Queue>();
  const workers = new Set<QueueWorker>();
  const removeOnComplete = options.keepCompleted ?? { age: 24 * 3600, count: 10_000 };
  const removeOnFail = options.keepFailed ?? { age: 7 * 24 * 3600, count: 10_000 };
  let closed = false;

  const queueOf = (name: string): Queue => {
    assertQueueName(name);
    let queue = queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: producer, prefix });
      queue.on("error", onError(`queue ${name}`));
      queues.set(name, queue);
    }
    return queue;
  };

  const bus: BullmqBus = {
    kind: "bullmq",

    async publish<T>(name: string, input: JobInput<T>, opts: PublishOptions = {}) {
      if (closed) throw new Error("the event bus is closed");
      if (opts.jobId !== undefined) assertJobId(opts.jobId);
      const attempts = attemptsFor(opts);
      const jobOptions: JobsOptions = {
        attempts,
        removeOnComplete: opts.dropWhenCompleted === true ? true : removeOnComplete,
        removeOnFail,
        ...(opts.jobId !== undefined ? { jobId: opts.jobId } : {}),
        ...(opts.delay ? { delay: opts.delay } : {}),
        ...(attempts > 1 ? { backoff: { type: backoffType } } : {}),
      };
      const job = await queueOf(name).add(
        input.name,
        toStoredJobData(input, opts.backoff),
        jobOptions,
      );
      return { id: job.id ?? opts.jobId ?? "" };
    },

    consume<T>(name: string, handler: JobHandler<T>, consume: ConsumeOptions<T> = {}): QueueWorker {
      if (closed) throw new Error("the event bus is closed");
      assertQueueName(name);
      const connection = new Redis(options.redisUrl, { maxRetriesPerRequest: null });
      connection.on("error", onError(`worker ${name}`));
      const processor = async (job: BullJob<StoredJobData<T>>) => {
        const { payload, trace } = job.data;
        const view = {
          id: job.id ?? "",
          queue: name,
          name: job.name,
          data: payload,
          attempt: job.attemptsMade + 1,
          maxAttempts: job.opts.attempts ?? 1,
          ...(trace ? { trace } : {}),
        };
        await runJobAttempt(handler, view, jobTracing(job.data), consume, logger);
      };
      const worker = new Worker<StoredJobData<T>>(name, processor, {
        connection,
        prefix,
        concurrency: Math.max(1, consume.concurrency ?? 1),
        maxStalledCount: options.maxStalledCount ?? 5,
        ...(options.stalledIntervalMs ? { stalledInterval: options.stalledIntervalMs } : {}),
        ...(options.lockDurationMs ? { lockDuration: options.lockDurationMs } : {}),
        settings: {
          backoffStrategy: (attemptsMade, _type, error, job) =>
            backoffDelay(
              (job?.data as StoredJobData | undefined)?.backoff,
              attemptsMade,
              retryAfterOf(error),
            ),
        },
      });
      worker.on("error", onError(`worker ${name}`));
      let closing: Promise<void> | undefined;
      const handle: QueueWorker = {
        queue: name,
        close() {
          closing ??= (async () => {
            await worker.close();
            await connection.quit().catch(() => connection.disconnect());
            workers.delete(handle);
          })();
          return closing;
        },
      };
      workers.add(handle);
      depth.add(name);
      return handle;
    },

    async oldestWaitingSeconds(name: string) {
      const [oldest] = await queueOf(name).getJobs(["wait", "prioritized"], 0, 0, true);
      return oldest ? Math.max(0, (Date.now() - oldest.timestamp) / 1000) : 0;
    },

    async jobCounts(name: string): Promise<JobCounts> {
      const c = await queueOf(name).getJobCounts(
        "waiting",
        "prioritized",
        "paused",
        "active",
        "delayed",
        "completed",
        "failed",
      );
      return {
        waiting: (c.waiting ?? 0) + (c.prioritized ?? 0) + (c.paused ?? 0),
        active: c.active ?? 0,
        delayed: c.delayed ?? 0,
        completed: c.completed ?? 0,
        failed: c.failed ?? 0,
      };
    },

    async obliterate(name: string) {
      await queueOf(name).obliterate({ force: true });
    },

    async isReady(timeoutMs = 1_000) {
      const timeout = new Promise<boolean>((resolve) =>
        setTimeout(() => resolve(false), timeoutMs).unref(),
      );
      return Promise.race([
        producer.ping().then(
          () => true,
          () => false,
        ),
        timeout,
      ]);
    },

    async close() {
      closed = true;
      depth.close();
      await Promise.all([...workers].map((worker) => worker.close()));
      await Promise.all([...queues.values()].map((queue) => queue.close()));
      await producer.quit().catch(() => producer.disconnect());
    },
  };
  // queue_jobs: the depth of the queues consumed here (one Redis and prefix is one queue set).
  const depth = trackQueueDepth(
    `${options.redisUrl} ${prefix}`,
    (queue) => bus.jobCounts(queue),
    (queue) => bus.oldestWaitingSeconds(queue),
  );
  return bus;
}
