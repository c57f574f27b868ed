import type { Logger, Pool } from "@switchboard/kit";
import { liveStatuses } from "./states.js";

// Spelled out so the planner can use the calls_live partial index.
const live = `status IN (${liveStatuses.map((status) => `'${status}'`).join(", ")})`;

/**
 * The drain window of a stopping call-control process (SIGTERM, after gRPC stopped taking
 * calls): the calls live when it began keep running here — this process's timers fire their
 * ringing, answer, hangup and time limit on time — until they have all ended or `windowMs`
 * passed. Whatever is still live then is left to its durable timers, which another replica
 * (or this service's next process) fires. Returns how many calls were left.
 */
export async function drainLiveCalls(options: {
  pool: Pool;
  logger: Logger;
  windowMs: number;
  pollMs?: number;
}): Promise<number> {
  const { pool, logger, windowMs } = options;
  if (windowMs <= 0) return 0;
  const deadline = Date.now() + windowMs;
  const { rows } = await pool.query<{ at: Date; n: number }>(
    `SELECT now() AS at, count(*)::int AS n FROM call_control.calls WHERE ${live}`,
  );
  const since = rows[0]?.at ?? new Date();
  let left = rows[0]?.n ?? 0;
  if (left === 0) return 0;
  logger.info({ calls: left, windowMs }, "draining: live calls run on here until they end");
  while (left > 0 && Date.now() < deadline) {
    const pause = Math.min(options.pollMs ?? 250, Math.max(0, deadline - Date.now()));
    await new Promise((resolve) => setTimeout(resolve, pause));
    const counted = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM call_control.calls WHERE ${live} AND created_at <= $1`,
      [since],
    );
    left = counted.rows[0]?.n ?? 0;
  }
  if (left > 0) logger.warn({ calls: left }, "drain window over: live calls left to the timers");
  else logger.info("draining: every live call has ended");
  return left;
}
