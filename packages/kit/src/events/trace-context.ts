/**
 * The trace-context seam (docs/architecture.md rule 8). The event plumbing *carries* W3C trace context:
 * a `TraceCarrier` rides in the outbox row, the event envelope and every job's data. The
 * installed `TracePropagator` writes and continues it; by default the OpenTelemetry one
 * (telemetry/event-propagator.ts), which does nothing while no tracer provider is registered.
 */
import { otelTracePropagator } from "../telemetry/event-propagator.js";
import type { TraceCarrier, TracedJobInfo, TracePropagator } from "./trace-carrier.js";

export type { TraceCarrier, TracedJobInfo, TracePropagator } from "./trace-carrier.js";

let propagator: TracePropagator = otelTracePropagator;

/** Installs the process-wide propagator (null restores the OpenTelemetry one). */
export function setTracePropagator(next: TracePropagator | null): void {
  propagator = next ?? otelTracePropagator;
}

const traceparentPattern = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

export const isValidTraceparent = (value: string): boolean =>
  traceparentPattern.test(value) && !/^[0-9a-f]{2}-0{32}-/.test(value) && !/-0{16}-/.test(value);

/** Keeps only well-formed W3C fields; undefined when nothing usable is left. */
export function sanitizeTraceCarrier(carrier: unknown): TraceCarrier | undefined {
  if (carrier === null || typeof carrier !== "object") return undefined;
  const { traceparent, tracestate } = carrier as Record<string, unknown>;
  if (typeof traceparent !== "string" || !isValidTraceparent(traceparent)) return undefined;
  return typeof tracestate === "string" && tracestate.length > 0 && tracestate.length <= 512
    ? { traceparent, tracestate }
    : { traceparent };
}

/** The active trace context as a carrier, or undefined when none is active (or no propagator). */
export function injectTraceContext(carrier: TraceCarrier = {}): TraceCarrier | undefined {
  propagator.inject(carrier);
  return sanitizeTraceCarrier(carrier);
}

/** Runs a job handler in the context extracted from its carrier (see TracePropagator.run). */
export function runWithTraceContext<T>(
  carrier: TraceCarrier | undefined,
  job: TracedJobInfo,
  work: () => Promise<T>,
): Promise<T> {
  return propagator.run(carrier, job, work);
}
