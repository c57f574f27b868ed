/**
 * Micro-batching: calls made within `maxWaitMs` of each other (up to `maxSize`) are served by
 * one `flush`, which answers each item in order. Concurrent deliveries of one worker thus share
 * one query or one transaction instead of paying a round trip and a commit each. With
 * `maxInFlight`, no more flushes than that run at once: what arrives meanwhile waits for one to
 * end and goes in the next batch, so batches grow with the load (group commit). A failed flush
 * fails every item of its batch.
 */
export interface Batcher<In, Out> {
  run(item: In): Promise<Out>;
}

export function createBatcher<In, Out>(
  flush: (items: In[]) => Promise<Out[]>,
  options: { maxSize: number; maxWaitMs: number; maxInFlight?: number },
): Batcher<In, Out> {
  const maxInFlight = options.maxInFlight ?? Infinity;
  let pending: { item: In; resolve: (out: Out) => void; reject: (error: unknown) => void }[] = [];
  let timer: NodeJS.Timeout | undefined;
  let inFlight = 0;

  const drain = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (pending.length === 0 || inFlight >= maxInFlight) return;
    const batch = pending.slice(0, options.maxSize);
    pending = pending.slice(batch.length);
    inFlight += 1;
    flush(batch.map((entry) => entry.item))
      .then(
        (results) => batch.forEach((entry, index) => entry.resolve(results[index] as Out)),
        (error: unknown) => batch.forEach((entry) => entry.reject(error)),
      )
      .finally(() => {
        inFlight -= 1;
        drain();
      });
    if (pending.length >= options.maxSize) drain();
  };

  return {
    run: (item) =>
      new Promise<Out>((resolve, reject) => {
        pending.push({ item, resolve, reject });
        if (pending.length >= options.maxSize) drain();
        else timer ??= setTimeout(drain, options.maxWaitMs);
      }),
  };
}
