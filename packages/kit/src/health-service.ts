import type { Logger } from "pino";
import { isDatabaseReady, type Pool } from "./db.js";
import type { EventBus } from "./events/bus.js";
import type { RunningGrpcServer } from "./grpc-server.js";
import { watchDependencies, type DependencyCheck, type DependencyWatch } from "./health-watch.js";

/** `postgres`: SELECT 1 answers within a second. */
export const databaseCheck =
  (pool: Pool, timeoutMs = 1_000): DependencyCheck =>
  async () =>
    (await isDatabaseReady(pool, timeoutMs)) ? "pass" : "fail";

/** `redis`: the queue's Redis answers PING within a second. */
export const busCheck =
  (bus: EventBus, timeoutMs = 1_000): DependencyCheck =>
  async () =>
    (await bus.isReady(timeoutMs).catch(() => false)) ? "pass" : "fail";

/**
 * Health that tells the truth (docs/architecture.md rule 9) for a gRPC service: its grpc.health.v1
 * status is SERVING only while its PostgreSQL pool and (when the queue is on Redis) Redis
 * answer, re-checked every 10 s while healthy (2 s while not) and whenever `check()` is called (the
 * admin port's /readyz). Resolves after the first check has set the status, so a service is
 * never reported ready before its dependencies were seen. `stop()` it before draining.
 */
export async function startServiceHealth(options: {
  server: RunningGrpcServer;
  pool: Pool;
  bus?: EventBus | undefined;
  intervalMs?: number;
  logger?: Logger;
}): Promise<DependencyWatch> {
  const checks: Record<string, DependencyCheck> = { postgres: databaseCheck(options.pool) };
  if (options.bus?.kind === "bullmq") checks.redis = busCheck(options.bus);
  const watch = watchDependencies({
    checks,
    ...(options.intervalMs !== undefined ? { intervalMs: options.intervalMs } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    onChange: (report) => options.server.setServing(report.status !== "fail"),
  });
  await watch.check();
  return watch;
}

/** What every service's start function returns: its gRPC server, its health, its stop. */
export interface RunningService {
  port: number;
  server: RunningGrpcServer;
  /** Its dependencies' health, which drives grpc.health.v1 (and the admin port's /readyz). */
  health: DependencyWatch;
  stop(): Promise<void>;
}
