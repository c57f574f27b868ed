import type { Logger } from "@switchboard/kit";
import type { IdempotencyStore } from "./idempotency-store.js";

/**
 * Deletes dead Idempotency-Key rows every `intervalSeconds` (±20 % jitter so replicas spread
 * out), in batches until none are left. Housekeeping only: claims ignore dead rows anyway.
 * Returns a stop function.
 */
export function schedulePurge(
  store: IdempotencyStore,
  options: { intervalSeconds: number; logger: Logger; batch?: number },
): () => void {
  if (options.intervalSeconds <= 0) return () => undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const batch = options.batch ?? 1_000;

  const run = async () => {
    let purged = 0;
    try {
      for (let deleted = batch; deleted === batch && !stopped; purged += deleted) {
        deleted = await store.purge(batch);
      }
      if (purged > 0) options.logger.debug({ purged }, "purged expired idempotency keys");
    } catch (error) {
      options.logger.warn({ err: error }, "idempotency key purge failed");
    }
    schedule();
  };
  const schedule = () => {
    if (stopped) return;
    const jitter = 0.8 + Math.random() * 0.4;
    timer = setTimeout(() => void run(), options.intervalSeconds * 1000 * jitter);
    timer.unref();
  };

  schedule();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
