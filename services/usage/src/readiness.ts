import {
  isDatabaseReady,
  type EventBus,
  type Pool,
  type RunningGrpcServer,
} from "@switchboard/kit";

/**
 * Health that tells the truth (ARCHITECTURE rule 9): the gRPC health status follows whether
 * PostgreSQL and the queue answer, checked every `intervalMs`.
 */
export function watchReadiness(options: {
  server: RunningGrpcServer;
  pool: Pool;
  bus: EventBus;
  intervalMs: number;
}): { stop(): void } {
  let stopped = false;
  let checking = false;
  const check = async () => {
    if (checking) return;
    checking = true;
    try {
      const [database, queue] = await Promise.all([
        isDatabaseReady(options.pool),
        options.bus.isReady(1_000).catch(() => false),
      ]);
      if (!stopped) options.server.setServing(database && queue);
    } finally {
      checking = false;
    }
  };
  const timer = setInterval(() => void check(), options.intervalMs);
  timer.unref();
  return {
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
