import type { Backoff } from "./backoff.js";
import type { TraceCarrier } from "./trace-context.js";

/**
 * The queue abstraction every service uses: named queues, jobs with retries and backoff, delayed
 * jobs, job-id dedupe, workers with concurrency and a graceful close. Two implementations:
 * BullMQ on Redis (mesh mode) and an in-process bus (embedded mode, REDIS_URL unset).
 */
export interface JobInput<TData = unknown> {
  /** A label for the job (for events: the event type). */
  name: string;
  /** JSON-serialisable; it is stored as JSON, so consumers see what JSON round-trips. */
  data: TData;
  /** W3C trace context to continue in the consumer. */
  trace?: TraceCarrier;
  /** The consumer should link to `trace` rather than parent it (fan-out). */
  traceLink?: boolean;
  /** The consumer opens no span for the job: its handler traces the job's parts (a batch). */
  untraced?: boolean;
}

export interface PublishOptions {
  /** Dedupe key: while a job with this id exists in the queue, publishing it again is a no-op. */
  jobId?: string;
  /** Milliseconds before the job becomes available. */
  delay?: number;
  /** Total tries (default 1; for a `schedule` backoff, one more than its delays). */
  attempts?: number;
  backoff?: Backoff;
  /**
   * Delete the job as soon as it completes instead of keeping it for the dedupe window (a job
   * id published again after completion then runs again). For queues whose handler checks the
   * truth itself and whose jobs are many (Redis does less work per job); the in-process bus
   * ignores it.
   */
  dropWhenCompleted?: boolean;
}

export interface Job<TData = unknown> {
  id: string;
  queue: string;
  name: string;
  data: TData;
  trace?: TraceCarrier;
  /** This try, 1-based. */
  attempt: number;
  maxAttempts: number;
}

export type JobHandler<TData = unknown> = (job: Job<TData>) => Promise<void>;

export interface ConsumeOptions<TData = unknown> {
  /** Jobs this worker runs at once (default 1). */
  concurrency?: number;
  /** Called on every failed try; `final` when no retry follows (exhausted or unrecoverable). */
  onFailed?: (job: Job<TData>, error: unknown, final: boolean) => void;
}

export interface QueueWorker {
  readonly queue: string;
  /** Stops taking jobs and resolves once the jobs in flight have finished. */
  close(): Promise<void>;
}

export interface JobCounts {
  waiting: number;
  active: number;
  delayed: number;
  completed: number;
  failed: number;
}

export interface EventBus {
  readonly kind: "bullmq" | "memory";
  /** Seconds the oldest waiting job of a queue has been there (0 when none waits). */
  oldestWaitingSeconds(queue: string): Promise<number>;
  publish<TData>(
    queue: string,
    job: JobInput<TData>,
    options?: PublishOptions,
  ): Promise<{ id: string }>;
  consume<TData>(
    queue: string,
    handler: JobHandler<TData>,
    options?: ConsumeOptions<TData>,
  ): QueueWorker;
  /** Jobs per state; completed/failed count only those still retained. */
  jobCounts(queue: string): Promise<JobCounts>;
  /** For readiness probes: the backing store answers (always true in process). */
  isReady(timeoutMs?: number): Promise<boolean>;
  /** Closes every worker (letting in-flight jobs finish), then the connections. */
  close(): Promise<void>;
}

/** Thrown by a handler: fail the job now, whatever attempts are left (e.g. a webhook 4xx). */
export class UnrecoverableJobError extends Error {
  override readonly name: string = "UnrecoverableError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Thrown by a handler: retry no sooner than `delayMs` (e.g. a webhook's Retry-After). */
export class RetryLaterError extends Error {
  override readonly name: string = "RetryLaterError";
  constructor(
    message: string,
    readonly delayMs: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
