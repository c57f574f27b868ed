import { wire } from "@switchboard/proto";

/**
 * The call state machine of docs/api.md:
 *   queued → initiated → ringing → in_progress → completed
 * and the other terminal states busy, no_answer, failed, canceled, rejected. Terminal states
 * never change: every transition is one guarded UPDATE (`WHERE status = ANY(allowed)`), so of
 * concurrent or reordered carrier callbacks only the forward ones apply.
 */
export const callStatuses = wire.callStatus.values;
export type CallStatus = wire.CallStatusValue;

export const liveStatuses = [
  "queued",
  "initiated",
  "ringing",
  "in_progress",
] as const satisfies readonly CallStatus[];
export type LiveStatus = (typeof liveStatuses)[number];
export type TerminalStatus = Exclude<CallStatus, LiveStatus>;
export const terminalStatuses = callStatuses.filter(
  (status): status is TerminalStatus => !(liveStatuses as readonly string[]).includes(status),
);

export const hangupCauses = wire.hangupCause.values;
export type HangupCause = wire.HangupCauseValue;

export const hangupSources = wire.hangupSource.values;
export type HangupSource = wire.HangupSourceValue;

export const callDirections = wire.callDirection.values;
export type CallDirection = wire.CallDirectionValue;

export const isCallStatus = wire.callStatus.is;

export const isTerminal = (status: string): boolean =>
  (terminalStatuses as readonly string[]).includes(status);

/** The states a call may be in for each forward step (and so for its guarded UPDATE). */
export const allowedFrom = {
  initiated: ["queued"],
  ringing: ["queued", "initiated"],
  in_progress: ["queued", "initiated", "ringing"],
  /** Any live state may end; the terminal status then depends on whether it was answered. */
  ended: [...liveStatuses],
} as const satisfies Record<string, readonly LiveStatus[]>;

/**
 * How a call ends. An answered call always ends `completed` (its cause says why); one that was
 * never answered ends in the status its cause names.
 */
export function unansweredStatusFor(cause: HangupCause): Exclude<TerminalStatus, "completed"> {
  switch (cause) {
    case "user_busy":
      return "busy";
    case "no_answer":
    case "timeout":
      return "no_answer";
    case "call_rejected":
    case "no_route":
      return "rejected";
    case "originator_cancel":
    case "normal_clearing":
    case "time_limit":
      return "canceled";
    case "network_error":
    case "seat_unavailable":
      return "failed";
  }
}

/** Why a call ended, as the carrier or the platform reports it. */
export interface Hangup {
  cause: HangupCause;
  source: HangupSource;
  sipCode: number | null;
}
