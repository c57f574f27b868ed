import { isSpanContextValid, trace } from "@opentelemetry/api";

/**
 * pino `mixin`: the active span's `trace_id` and `span_id` on every log line, so logs and
 * traces join. Empty when no span is active (or no tracer provider is registered).
 */
export function traceLogFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return isSpanContextValid(span.spanContext()) ? { trace_id: traceId, span_id: spanId } : {};
}
