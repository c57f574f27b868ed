import type { TraceCarrier } from "./trace-context.js";

/**
 * One domain event as it travels from the outbox through the bus to consumers. The public
 * webhook payload of docs/api.md is its subset `{id, type, timestamp, account_id, sequence, data}`;
 * `resource_id` and `trace` are internal.
 */
export interface EventEnvelope<TData = Record<string, unknown>> {
  /** `evt_<ULID>`; consumers dedupe on it. */
  id: string;
  /** Dotted event type, e.g. `number.held`. */
  type: string;
  /** RFC 3339 UTC time the event was recorded (the outbox row's `occurred_at`). */
  timestamp: string;
  account_id: string;
  /** The resource the event is about; `sequence` counts per resource. */
  resource_id: string;
  /** 1, 2, 3… per `resource_id`, gapless among committed events. */
  sequence: number;
  data: TData;
  /** W3C trace context of the transaction that recorded the event. */
  trace?: TraceCarrier;
}

/** The webhook payload of docs/api.md ("Delivery"). */
export interface PublicEvent<TData = Record<string, unknown>> {
  id: string;
  type: string;
  timestamp: string;
  account_id: string;
  sequence: number;
  data: TData;
}

export function toPublicEvent<TData>(event: EventEnvelope<TData>): PublicEvent<TData> {
  const { id, type, timestamp, account_id, sequence, data } = event;
  return { id, type, timestamp, account_id, sequence, data };
}

const eventTypePattern = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;

export const isEventType = (value: string): boolean =>
  value.length <= 100 && eventTypePattern.test(value);

/**
 * True when `type` matches one of `patterns`: an exact type, `prefix.*` (any type under the
 * prefix, at any depth) or `*` (everything). An empty or missing list matches everything.
 */
export function eventTypeMatches(type: string, patterns?: readonly string[]): boolean {
  if (!patterns || patterns.length === 0) return true;
  return patterns.some((pattern) =>
    pattern === "*"
      ? true
      : pattern.endsWith(".*")
        ? type.startsWith(pattern.slice(0, -1))
        : type === pattern,
  );
}
