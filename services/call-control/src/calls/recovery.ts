import type { Logger, Pool } from "@switchboard/kit";
import { callColumns, type CallRow } from "./call-rows.js";
import type { CallEngine } from "./call-engine.js";
import { liveStatuses } from "./states.js";

/**
 * Start-up recovery. Every live call has at least one durable timer (dial, ring timeout, time
 * limit, the sandbox network's script) written in the transaction that made it live, so the
 * action runner finishes calls that were in flight when a process died: overdue timers fire at
 * once and the call ends at the time it was due. A live call without any timer (an adapter
 * that lost its dialogs, a timer given up) cannot progress: it is failed here with
 * `network_error` rather than left ringing forever. First the carrier ends what it cannot
 * continue (the sip carrier: dialogs whose setup ran in the process that died).
 */
export async function recoverOrphanedCalls(options: {
  pool: Pool;
  engine: CallEngine;
  logger: Logger;
}): Promise<number> {
  const { pool, engine, logger } = options;
  await engine.carrier.recover();
  const { rows } = await pool.query<CallRow>(
    `SELECT ${callColumns} FROM call_control.calls c
      WHERE c.status = ANY($1::text[])
        AND NOT EXISTS (SELECT 1 FROM call_control.scheduled_actions a WHERE a.call_id = c.id)`,
    [liveStatuses],
  );
  let failed = 0;
  for (const row of rows) {
    const ended = await engine.transaction((tx) =>
      engine.hangupLive(tx, row, { cause: "network_error", source: "platform", sipCode: 503 }),
    );
    if (ended) failed += 1;
  }
  if (failed > 0) logger.warn({ failed }, "recovery: live calls without timers were failed");
  return failed;
}
