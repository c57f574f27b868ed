import type { Backoff } from "./backoff.js";
import type { ConsumeOptions, EventBus, Job, QueueWorker } from "./bus.js";
import type { EventEnvelope } from "./envelope.js";
import { isUnrecoverable, reportFailure } from "./job-runtime.js";
import { runWithTraceContext } from "./trace-context.js";

/**
 * Fan-out: one queue per consumer group (`events.<group>`). The relay publishes every event once
 * to each group whose `types` match, with the event id as job id, so every group gets every
 * event it asked for, a group that is down only accumulates its own backlog, and a republished
 * event is deduped per queue. Groups are a static list the producing service is configured
 * with (not discovered at run time): an event is never lost for a group that was not yet
 * listening.
 */
export interface ConsumerGroup {
  /** e.g. `usage`, `webhook`; the queue is `events.<name>`. */
  name: string;
  /** Event type patterns (`call.*`, `number.held`, `*`); all events when omitted. */
  types?: readonly string[];
  /** Tries per event (default 10) and the delays between them. */
  attempts?: number;
  backoff?: Backoff;
  /**
   * The relay hands the group each batch's matching events as one job on
   * `events.<name>.batches` instead of a job per event: one job's work in Redis and in the
   * consumer for many events (a call's five events cost the usage and webhook groups ten jobs
   * otherwise). For a group whose handler is idempotent per event: a failed event retries its
   * whole batch, and the others are taken again. Its consumers pass `batched` to consumeEvents.
   */
  batched?: boolean;
}

/** Event consumers retry for about 20 minutes before an event lands in the failed set. */
export const defaultEventRetry: { attempts: number; backoff: Backoff } = {
  attempts: 10,
  backoff: { type: "exponential", delayMs: 1_000, maxDelayMs: 10 * 60_000, jitter: 0.2 },
};

const groupPattern = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export function eventQueueName(group: string): string {
  if (!groupPattern.test(group)) throw new Error(`invalid consumer group ${JSON.stringify(group)}`);
  return `events.${group}`;
}

/** The queue of a batched group's batches (`events.<group>.batches`). */
export function eventBatchQueueName(group: string): string {
  return `${eventQueueName(group)}.batches`;
}

/** Every queue a group's events may wait in: one by one, and in batches. */
export const eventQueueNames = (group: string): string[] => [
  eventQueueName(group),
  eventBatchQueueName(group),
];

/** A batched group's job: the events of one relay batch that the group takes. */
export interface EventBatch<TData = unknown> {
  events: EventEnvelope<TData>[];
}

/**
 * Publishes a relay batch's events to a batched group as one job, named by its first and last
 * event (a batch published again while it waits is deduped; one published again later is
 * taken again, event by event idempotently). Each event keeps its own trace context: the job
 * has none, and its consumer traces each event (consumeEvents).
 */
export async function publishEventBatch(
  bus: EventBus,
  group: ConsumerGroup,
  events: readonly EventEnvelope<unknown>[],
): Promise<void> {
  const [first, last] = [events[0], events[events.length - 1]];
  if (!first || !last) return;
  await bus.publish<EventBatch>(
    eventBatchQueueName(group.name),
    { name: "events", data: { events: [...events] }, untraced: true },
    {
      jobId: `${first.id}.${last.id}`,
      attempts: group.attempts ?? defaultEventRetry.attempts,
      backoff: group.backoff ?? defaultEventRetry.backoff,
      dropWhenCompleted: true,
    },
  );
}

/** Publishes one event to one group's queue; the job id is the event id (dedupe). */
export async function publishEvent(
  bus: EventBus,
  group: ConsumerGroup,
  event: EventEnvelope<unknown>,
  options: { delay?: number } = {},
): Promise<void> {
  await bus.publish(
    eventQueueName(group.name),
    {
      name: event.type,
      data: event,
      ...(event.trace ? { trace: event.trace } : {}),
      traceLink: true,
    },
    {
      jobId: event.id,
      attempts: group.attempts ?? defaultEventRetry.attempts,
      backoff: group.backoff ?? defaultEventRetry.backoff,
      ...(options.delay ? { delay: options.delay } : {}),
    },
  );
}

export type EventHandler<TData = Record<string, unknown>> = (
  event: EventEnvelope<TData>,
  job: Job<EventEnvelope<TData>>,
) => Promise<void>;

export interface ConsumeEventsOptions<TData> extends ConsumeOptions<EventEnvelope<TData>> {
  /**
   * Take the group's batches too (its producers' ConsumerGroup is `batched`): each event of a
   * batch runs the handler, all at once, in a CONSUMER span of its own linked to the event's
   * trace, as a job of its own would; the batch fails if any of them fails. The group's
   * one-by-one queue is still taken, so events a relay of an earlier release published there
   * are not stranded. `concurrency` counts batches.
   */
  batched?: boolean;
}

/**
 * Runs `handler` for every event delivered to `group`. Delivery is at-least-once: make the
 * handler idempotent with consumeOnce (its effect and the event id commit together).
 */
export function consumeEvents<TData = Record<string, unknown>>(
  bus: EventBus,
  group: string,
  handler: EventHandler<TData>,
  options: ConsumeEventsOptions<TData> = {},
): QueueWorker {
  const { batched, ...consume } = options;
  const queue = eventQueueName(group);
  const single = bus.consume<EventEnvelope<TData>>(queue, (job) => handler(job.data, job), consume);
  if (!batched) return single;
  const batches = bus.consume<EventBatch<TData>>(
    eventBatchQueueName(group),
    (job) => runBatch(queue, job, handler, consume),
    consume.concurrency !== undefined ? { concurrency: consume.concurrency } : {},
  );
  return {
    queue,
    close: async () => {
      await Promise.all([single.close(), batches.close()]);
    },
  };
}

async function runBatch<TData>(
  queue: string,
  batch: Job<EventBatch<TData>>,
  handler: EventHandler<TData>,
  options: ConsumeOptions<EventEnvelope<TData>>,
): Promise<void> {
  const failures = await Promise.all(
    batch.data.events.map(async (event) => {
      const job: Job<EventEnvelope<TData>> = {
        id: event.id,
        queue,
        name: event.type,
        data: event,
        attempt: batch.attempt,
        maxAttempts: batch.maxAttempts,
        ...(event.trace ? { trace: event.trace } : {}),
      };
      try {
        await runWithTraceContext(
          event.trace,
          { queue, jobName: event.type, jobId: event.id, attempt: batch.attempt, link: true },
          () => handler(event, job),
        );
        return [];
      } catch (error) {
        return [{ job, error }];
      }
    }),
  ).then((outcomes) => outcomes.flat());
  if (failures.length === 0) return;
  // A batch whose every failure is unrecoverable ends now; any other failure retries it all.
  const retried = failures.find(({ error }) => !isUnrecoverable(error));
  const final = !retried || batch.attempt >= batch.maxAttempts;
  for (const { job, error } of failures) reportFailure(options, job, error, final);
  throw (retried ?? failures[0]!).error;
}
