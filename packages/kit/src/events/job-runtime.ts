/**
 * What both bus implementations share below the EventBus interface: the stored job shape,
 * option rules and the one-try runner. Internal: not exported from the kit's index.
 */
import type { Logger } from "pino";
import type { Backoff } from "./backoff.js";
import {
  RetryLaterError,
  UnrecoverableJobError,
  type ConsumeOptions,
  type Job,
  type JobHandler,
  type JobInput,
  type PublishOptions,
} from "./bus.js";
import { runWithTraceContext, type TraceCarrier } from "./trace-context.js";
import { countJobOutcome } from "../metrics/queues.js";

/** BullMQ's own UnrecoverableError counts too (same name). */
export const isUnrecoverable = (error: unknown): boolean =>
  error instanceof UnrecoverableJobError ||
  (error instanceof Error && error.name === "UnrecoverableError");

export const retryAfterOf = (error: unknown): number =>
  error instanceof RetryLaterError ? Math.max(0, error.delayMs) : 0;

/** What both implementations store as a job's data. */
export interface StoredJobData<TData = unknown> {
  payload: TData;
  trace?: TraceCarrier;
  link?: boolean;
  untraced?: boolean;
  backoff?: Backoff;
}

/** How a job's try is traced: a child of its carrier, a root linked to it, or not at all. */
export type JobTracing = "child" | "link" | "none";

export const jobTracing = (stored: StoredJobData<unknown>): JobTracing =>
  stored.untraced === true ? "none" : stored.link === true ? "link" : "child";

export function toStoredJobData<TData>(
  job: JobInput<TData>,
  backoff?: Backoff,
): StoredJobData<TData> {
  return {
    payload: JSON.parse(JSON.stringify(job.data ?? null)) as TData,
    ...(job.trace ? { trace: job.trace } : {}),
    ...(job.traceLink ? { link: true } : {}),
    ...(job.untraced ? { untraced: true } : {}),
    ...(backoff ? { backoff } : {}),
  };
}

/** The attempts a job gets when the publisher does not say. */
export const attemptsFor = (options: PublishOptions): number =>
  Math.max(
    1,
    options.attempts ??
      (options.backoff?.type === "schedule" ? options.backoff.delaysMs.length + 1 : 1),
  );

/** The same rules as BullMQ, so code that runs embedded also runs on Redis. */
export function assertQueueName(queue: string): void {
  if (!/^[A-Za-z0-9._-]{1,200}$/.test(queue)) {
    throw new Error(`invalid queue name ${JSON.stringify(queue)}: use [A-Za-z0-9._-]`);
  }
}

export function assertJobId(jobId: string): void {
  if (jobId === "" || `${parseInt(jobId, 10)}` === jobId || jobId.includes(":")) {
    throw new Error(`invalid job id ${JSON.stringify(jobId)}: not an integer, no ':'`);
  }
}

/** Runs one try of a job in its trace context and reports a failure to `onFailed`. */
export async function runJobAttempt<TData>(
  handler: JobHandler<TData>,
  job: Job<TData>,
  tracing: JobTracing,
  options: ConsumeOptions<TData>,
  logger?: Logger,
): Promise<void> {
  try {
    await (tracing === "none"
      ? handler(job)
      : runWithTraceContext(
          job.trace,
          {
            queue: job.queue,
            jobName: job.name,
            jobId: job.id,
            attempt: job.attempt,
            link: tracing === "link",
          },
          () => handler(job),
        ));
    countJobOutcome(job.queue, "completed");
  } catch (error) {
    const final = isUnrecoverable(error) || job.attempt >= job.maxAttempts;
    countJobOutcome(job.queue, final ? "failed" : "retry");
    logger?.[final ? "warn" : "debug"](
      { err: error, queue: job.queue, job_id: job.id, attempt: job.attempt, final },
      final ? "job failed" : "job attempt failed; will retry",
    );
    reportFailure(options, job, error, final);
    throw error;
  }
}

/** Tells `options.onFailed` of a failed try; a hook that throws changes nothing. */
export function reportFailure<TData>(
  options: ConsumeOptions<TData>,
  job: Job<TData>,
  error: unknown,
  final: boolean,
): void {
  try {
    options.onFailed?.(job, error, final);
  } catch {
    // a failing hook must not change the job's outcome
  }
}
