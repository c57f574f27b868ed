import { trace } from "@opentelemetry/api";
import { IORedisInstrumentation } from "@opentelemetry/instrumentation-ioredis";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import {
  envDetector,
  hostDetector,
  processDetector,
  type ResourceDetector,
} from "@opentelemetry/resources";
import { NodeSDK } from "@opentelemetry/sdk-node";
import {
  AlwaysOffSampler,
  NoopSpanProcessor,
  ParentBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import {
  serviceNameConfigured,
  serviceNameFromEntry,
  telemetryDisabled,
  traceExportRequested,
} from "./env.js";

/**
 * Starts the OpenTelemetry Node SDK once per process (see register.ts and docs/observability.md,
 * "Tracing and logs"). Traces only: metrics are Prometheus on the admin port, logs are pino on
 * stdout, so the SDK's metric readers and log processors stay empty whatever OTEL_*_EXPORTER
 * says. Library instrumentation is limited to what our own spans do not cover:
 *  - pg: statement text only (`enhancedDatabaseReporting: false`, no bound values), and only
 *    inside a traced operation (`requireParentSpan`), so pollers (outbox relays, timers) are
 *    silent;
 *  - ioredis: the command name only (never its arguments: keys, job payloads), also only inside
 *    a traced operation (BullMQ's own blocking polls make no spans).
 * HTTP, gRPC, queue and log correlation are the kit's own (telemetry/*-spans.ts,
 * event-propagator.ts, log-fields.ts), so http, grpc and pino instrumentations stay off. Without
 * an exporter the pg and ioredis ones are not loaded either: their spans could never leave the
 * process, and wrapping every query and command cost throughput (`npm run bench:floor`).
 */
const startedKey = Symbol.for("switchboard.telemetry.sdk");

/** The process detector without the command line: arguments are nobody's business. */
const processWithoutArguments: ResourceDetector = {
  detect: (config) => {
    const { attributes = {} } = processDetector.detect(config);
    const { "process.command_args": _args, "process.command_line": _line, ...kept } = attributes;
    return { attributes: kept };
  },
};

type Registry = typeof globalThis & { [startedKey]?: NodeSDK };

export function instrumentations() {
  return [
    new PgInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true }),
    new IORedisInstrumentation({
      requireParentSpan: true,
      dbStatementSerializer: (command) => command,
    }),
  ];
}

/** Starts the SDK (idempotent); undefined when OTEL_SDK_DISABLED=true. */
export function startTelemetry(env: NodeJS.ProcessEnv = process.env): NodeSDK | undefined {
  const registry = globalThis as Registry;
  if (registry[startedKey]) return registry[startedKey];
  if (telemetryDisabled(env)) return undefined;
  const exporting = traceExportRequested(env);
  const sdk = new NodeSDK({
    ...(serviceNameConfigured(env) ? {} : { serviceName: serviceNameFromEntry(process.argv[1]) }),
    resourceDetectors: [envDetector, hostDetector, processWithoutArguments],
    instrumentations: exporting ? instrumentations() : [],
    metricReaders: [],
    logRecordProcessors: [],
    // Without an exporter: ids and propagation, nothing sent. Traces started here are not
    // recorded; a caller's sampled flag is kept so the services after us still see it.
    ...(exporting
      ? {}
      : {
          sampler: new ParentBasedSampler({ root: new AlwaysOffSampler() }),
          spanProcessors: [new NoopSpanProcessor()],
        }),
  });
  sdk.start();
  registry[startedKey] = sdk;
  if (exporting) flushOnSignals();
  return sdk;
}

/**
 * Spans wait in the batch processor for up to OTEL_BSP_SCHEDULE_DELAY. From SIGTERM/SIGINT on
 * (the process drains and then exits at once) they are flushed every 200 ms, so only the last
 * instant of a shutdown can be lost.
 */
function flushOnSignals(): void {
  const flush = () => {
    const provider = trace.getTracerProvider() as { getDelegate?: () => unknown };
    const delegate = (provider.getDelegate?.() ?? provider) as { forceFlush?: () => Promise<void> };
    void delegate.forceFlush?.().catch(() => undefined);
  };
  let flushing: NodeJS.Timeout | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    flush();
    flushing ??= setInterval(flush, 200).unref();
    // Alone, this listener would swallow the signal: give the default (exit) back.
    if (process.listenerCount(signal) === 1) {
      process.removeListener(signal, onSignal);
      setTimeout(() => process.kill(process.pid, signal), 500).unref();
    }
  };
  process.prependListener("SIGTERM", onSignal);
  process.prependListener("SIGINT", onSignal);
}
