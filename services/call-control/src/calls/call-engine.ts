import type { Logger, Pool } from "@switchboard/kit";
import type { CarrierAdapter, CarrierEvent, CarrierEvents } from "./carrier.js";
import type { ActionRunner, DueAction } from "../scheduler/action-runner.js";
import { inOneStatement, inTransaction, type Tx } from "../scheduler/tx.js";
import { callColumns, type CallRow } from "./call-rows.js";
import { foldAnswered, foldDialled, foldEnded, foldRinging } from "./folded-steps.js";
import type { Hangup, LiveStatus } from "./states.js";
import {
  callTimerKinds,
  endCall,
  markAnswered,
  earlyMediaStatement,
  markEarlyMedia,
  markInitiated,
  markRinging,
} from "./transitions.js";

export interface CallEngine extends CarrierEvents {
  readonly carrier: CarrierAdapter;
  /** Runs `work` in a transaction; the timers it sets wake the runner after commit. */
  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /**
   * Runs `work`, whose writes are one statement (no transaction block, no deferred writes); the
   * timers it notes wake the runner once it succeeded.
   */
  oneStatement<T>(work: (tx: Tx) => Promise<T>): Promise<T>;
  /** Ends a live call the platform or the account hangs up, and tells the carrier. */
  hangupLive(
    tx: Tx,
    row: CallRow,
    hangup: Hangup,
    options?: { from?: readonly LiveStatus[]; at?: Date },
  ): Promise<CallRow | undefined>;
}

const networkFailure: Hangup = { cause: "network_error", source: "platform", sipCode: 503 };

/**
 * The call engine: the platform's durable timers (dial after commit, ring timeout, time limit)
 * and the carrier's progress, each applied through the guarded transitions.
 */
export function createCallEngine(options: {
  pool: Pool;
  runner: ActionRunner;
  carrier: CarrierAdapter;
  logger: Logger;
}): CallEngine {
  const { pool, runner, carrier, logger } = options;

  const loadCall = async (tx: Tx, callId: string) => {
    const { rows } = await tx.client.query<CallRow>(
      `SELECT ${callColumns} FROM call_control.calls c WHERE c.id = $1`,
      [callId],
    );
    return rows[0];
  };

  const engine: CallEngine = {
    carrier,
    transaction: (work) => inTransaction(pool, runner, work),
    oneStatement: (work) => inOneStatement(pool, runner, work),

    async onCarrierEvent(tx: Tx, event: CarrierEvent) {
      switch (event.type) {
        case "ringing":
          await markRinging(tx, event.callId, event.at);
          return;
        case "answered":
          await markAnswered(tx, event.callId, event.at);
          return;
        case "early_media":
          await markEarlyMedia(tx, event.callId);
          return;
        case "ended":
          await endCall(tx, event.callId, event.hangup, {
            at: event.at,
            unanswered: event.unanswered ?? false,
          });
          return;
      }
    },

    foldCarrierEvent(tx: Tx, event: CarrierEvent) {
      switch (event.type) {
        case "ringing":
          foldRinging(tx, event.callId, event.at);
          return;
        case "answered":
          foldAnswered(tx, event.callId, event.at);
          return;
        case "early_media":
          tx.defer(earlyMediaStatement, [event.callId]);
          return;
        case "ended":
          foldEnded(tx, event.callId, event.hangup, {
            at: event.at,
            unanswered: event.unanswered ?? false,
          });
          return;
      }
    },

    async hangupLive(tx, row, hangup, options = {}) {
      const ended = await endCall(tx, row.id, hangup, options);
      if (ended) {
        await carrier.hangup(tx, {
          callId: row.id,
          direction: row.direction as "outbound" | "inbound",
          hangup,
        });
      }
      return ended;
    },
  };

  /** INVITE after the call committed `queued`; a dial that keeps failing fails the call. */
  runner.register(callTimerKinds.dial, {
    async run(tx: Tx, action: DueAction) {
      const to = action.payload.to;
      const identityInfo = String(action.payload.identity_info ?? "");
      if (carrier.foldDial && typeof to === "string") {
        // One round trip: the step, the dial's rows and the ring timeout in one statement.
        const fold = carrier.foldDial.bind(carrier);
        foldDialled(tx, action.callId, (param) =>
          fold(tx, { callId: action.callId, to, identityInfo }, param),
        );
        return;
      }
      const row = await markInitiated(tx, action.callId);
      if (!row) return; // hung up before the dial, or dialled already
      await carrier.dial(tx, {
        callId: row.id,
        accountId: row.account_id,
        seatId: row.seat_id,
        to: row.to_number,
        from: row.from_number,
        identity: row.identity ?? "",
        identityInfo,
        timeoutSeconds: row.timeout_seconds,
      });
      await tx.schedule({
        callId: row.id,
        kind: callTimerKinds.timeout,
        delayMs: row.timeout_seconds * 1000,
        payload: { cause: "timeout", source: "platform", sipCode: 487 },
      });
    },
    async exhausted(tx: Tx, action: DueAction) {
      await endCall(tx, action.callId, networkFailure);
    },
    // A carrier's folded dial is one deferred statement.
    defersOnly: carrier.foldDial !== undefined,
  });

  /** Nobody answered within the timeout: CANCEL (outbound) or stop ringing (inbound). */
  runner.register(callTimerKinds.timeout, {
    async run(tx: Tx, action: DueAction) {
      const row = await loadCall(tx, action.callId);
      if (!row) return;
      const hangup = action.payload as unknown as Hangup;
      await engine.hangupLive(tx, row, hangup, {
        from: ["queued", "initiated", "ringing"],
        at: action.dueAt,
      });
    },
  });

  /** The call reached its time limit: BYE. */
  runner.register(callTimerKinds.timeLimit, {
    async run(tx: Tx, action: DueAction) {
      const row = await loadCall(tx, action.callId);
      if (!row) return;
      const hangup: Hangup = { cause: "time_limit", source: "platform", sipCode: 200 };
      await engine.hangupLive(tx, row, hangup, { from: ["in_progress"], at: action.dueAt });
    },
  });

  carrier.attach(engine, runner);
  logger.debug({ carrier: carrier.name }, "call engine ready");
  return engine;
}
