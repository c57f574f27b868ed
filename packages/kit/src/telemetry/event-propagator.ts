import {
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  trace,
  type Link,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import type { TraceCarrier, TracedJobInfo, TracePropagator } from "../events/trace-carrier.js";
import { runInSpan, tracer } from "./spans.js";

/**
 * The events seam backed by OpenTelemetry. The carrier is W3C by definition (it is stored in
 * outbox rows and job data), so it is always written by the W3C propagator, whatever
 * OTEL_PROPAGATORS says for HTTP and gRPC.
 *
 * Producer: the active context goes into the carrier. Consumer: each try of a job runs in a
 * CONSUMER span, `process <queue>`, that is a child of the carried context, or, for fan-out
 * (`link`), the root of a new trace with a link to it: one event feeds many independent
 * consumers, and their work is not part of the request that recorded it.
 */
const w3c = new W3CTraceContextPropagator();

export const otelTracePropagator: TracePropagator = {
  inject(carrier: TraceCarrier): void {
    w3c.inject(context.active(), carrier, defaultTextMapSetter);
  },

  run<T>(carrier: TraceCarrier | undefined, job: TracedJobInfo, work: () => Promise<T>) {
    const carried = carrier
      ? w3c.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter)
      : ROOT_CONTEXT;
    const remote = trace.getSpanContext(carried);
    const links: Link[] =
      job.link && remote && isSpanContextValid(remote) ? [{ context: remote }] : [];
    const parent = links.length > 0 ? ROOT_CONTEXT : carried;
    const span = tracer().startSpan(
      `process ${job.queue}`,
      {
        kind: SpanKind.CONSUMER,
        links,
        attributes: {
          "messaging.operation.type": "process",
          "messaging.operation.name": "process",
          "messaging.destination.name": job.queue,
          "messaging.message.id": job.jobId,
          "switchboard.job.name": job.jobName,
          "switchboard.job.attempt": job.attempt,
        },
      },
      parent,
    );
    return runInSpan(span, parent, work);
  },
};
