import { context, propagation, trace } from "@opentelemetry/api";
import {
  InMemorySpanExporter,
  NodeTracerProvider,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace-node";
import type { DestinationStream } from "pino";

/**
 * Tracing and log capture for tests that run the platform in process (no preload): an
 * in-memory exporter behind a registered NodeTracerProvider (AsyncLocalStorage context, W3C
 * propagation), and a pino destination that keeps every line. Register before the platform
 * starts handling requests.
 */
export interface InMemoryTracing {
  spans(): ReadableSpan[];
  stop(): Promise<void>;
}

export function installInMemoryTracing(): InMemoryTracing {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register();
  return {
    spans: () => exporter.getFinishedSpans(),
    stop: async () => {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

export interface CapturedLogs {
  stream: DestinationStream;
  lines: string[];
}

export function captureLogs(): CapturedLogs {
  const lines: string[] = [];
  return { lines, stream: { write: (line: string) => void lines.push(line) } };
}

/** Everything a span could leak, as text: name, attributes, events, links, status, resource. */
export function spanText(span: ReadableSpan): string {
  return JSON.stringify({
    name: span.name,
    attributes: span.attributes,
    events: span.events,
    links: span.links,
    status: span.status,
    resource: span.resource.attributes,
  });
}

/** The names of the `secrets` whose value occurs in any of `texts`. */
export function leaks(texts: readonly string[], secrets: Record<string, string>): string[] {
  return Object.entries(secrets)
    .filter(([, value]) => texts.some((text) => text.includes(value)))
    .map(([name]) => name);
}
