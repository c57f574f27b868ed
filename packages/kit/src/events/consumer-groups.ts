import type { Backoff } from "./backoff.js";
import type { ConsumeOptions, EventBus, Job, QueueWorker } from "./bus.js";
import type { EventEnvelope } from "./envelope.js";

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

/**
 * Runs `handler` for every event delivered to `group`. Delivery is at-least-once: make the
 * handler idempotent with consumeOnce (its effect and the event id commit together).
 */
export function consumeEvents<TData = Record<string, unknown>>(
  bus: EventBus,
  group: string,
  handler: EventHandler<TData>,
  options: ConsumeOptions<EventEnvelope<TData>> = {},
): QueueWorker {
  return bus.consume<EventEnvelope<TData>>(
    eventQueueName(group),
    (job) => handler(job.data, job),
    options,
  );
}
