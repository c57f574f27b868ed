import {
  isDatabaseReady,
  type EventBus,
  type Pool,
  type RunningGrpcServer,
} from "@switchboard/kit";

/**
 * Readiness that tells the truth (ARCHITECTURE rule 9): grpc.health.v1 answers SERVING only
 * while PostgreSQL and the queue's store answer.
 */
export function watchReadiness(options: {
  server: RunningGrpcServer;
  pool: Pool;
  bus: EventBus;
  intervalMs?: number;
}): { stop(): void } {
  let last = true;
  let busy = false;
  const check = async () => {
    if (busy) return;
    busy = true;
    try {
      const [database, queue] = await Promise.all([
        isDatabaseReady(options.pool),
        options.bus.isReady(),
      ]);
      const ready = database && queue;
      if (ready !== last) options.server.setServing(ready);
      last = ready;
    } finally {
      busy = false;
    }
  };
  const timer = setInterval(() => void check(), options.intervalMs ?? 5_000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
