/**
 * Micro-batching: calls made within `maxWaitMs` of each other (up to `maxSize`) are served by
 * one `flush`, which answers each item in order. Concurrent deliveries of one worker thus share
 * one query or one transaction instead of paying a round trip and a commit each. A failed
 * flush fails every item of its batch.
 */
export interface Batcher<In, Out> {
  run(item: In): Promise<Out>;
}

export function createBatcher<In, Out>(
  flush: (items: In[]) => Promise<Out[]>,
  options: { maxSize: number; maxWaitMs: number },
): Batcher<In, Out> {
  let pending: { item: In; resolve: (out: Out) => void; reject: (error: unknown) => void }[] = [];
  let timer: NodeJS.Timeout | undefined;

  const drain = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const batch = pending;
    pending = [];
    if (batch.length === 0) return;
    flush(batch.map((entry) => entry.item)).then(
      (results) => batch.forEach((entry, index) => entry.resolve(results[index] as Out)),
      (error: unknown) => batch.forEach((entry) => entry.reject(error)),
    );
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
