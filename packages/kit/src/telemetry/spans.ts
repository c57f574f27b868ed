import {
  context,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type Tracer,
} from "@opentelemetry/api";
import { DomainError } from "../errors.js";
import { isServerFaultKind } from "../grpc-errors.js";

/**
 * The kit's own spans (gateway HTTP server, gRPC client and server, queue consumers, webhook
 * deliveries) are made with `@opentelemetry/api` only, so they go to whatever tracer provider
 * is registered: the SDK the preload starts, a test's in-memory one, or none (no-op).
 */
export const instrumentationScope = "@switchboard/kit";

/** Looked up per span: a provider registered later (a test's) is always the one used. */
export const tracer = (): Tracer => trace.getTracer(instrumentationScope);

/**
 * A low-cardinality, secret-free name for a failure: the problem kind of a DomainError, else
 * the error's class name. Messages are never recorded (they may quote input).
 */
export function errorType(error: unknown): string {
  if (error instanceof DomainError) return error.kind;
  if (error instanceof Error) return error.name || "Error";
  return "unknown";
}

/** Marks the span failed without recording the error's message or stack. */
export function failSpan(span: Span, error: unknown): void {
  span.setAttribute("error.type", errorType(error));
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** True when an error is the server's fault, not the client's. */
export const isServerFault = (error: unknown): boolean =>
  !(error instanceof DomainError) || isServerFaultKind(error.kind);

export interface SpanOutcome<T> {
  /** Annotates the span with a result. */
  ok?: (result: T) => void;
  /** Annotates the span with a failure (default: failSpan). */
  failed?: (error: unknown) => void;
}

/** Runs `work` with `span` active (under `parent`) and ends the span once it settles. */
export function runInSpan<T>(
  span: Span,
  parent: Context,
  work: () => Promise<T>,
  outcome: SpanOutcome<T> = {},
): Promise<T> {
  return context
    .with(trace.setSpan(parent, span), async () => work())
    .then(
      (result) => {
        outcome.ok?.(result);
        span.end();
        return result;
      },
      (error: unknown) => {
        if (outcome.failed) outcome.failed(error);
        else failSpan(span, error);
        span.end();
        throw error;
      },
    );
}
