import { trace } from "@opentelemetry/api";

interface Flushable {
  forceFlush?: () => Promise<void>;
  getDelegate?: () => unknown;
}

/**
 * Exports the spans still waiting in the batch processor (a process calls it once it has
 * drained, just before it exits). Waits at most `timeoutMs`; a no-op when no SDK is running.
 */
export async function flushTelemetry(timeoutMs = 2_000): Promise<void> {
  const registered = trace.getTracerProvider() as Flushable;
  const provider = (registered.getDelegate?.() ?? registered) as Flushable;
  if (typeof provider.forceFlush !== "function") return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    provider.forceFlush().catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref();
    }),
  ]);
  clearTimeout(timer);
}
