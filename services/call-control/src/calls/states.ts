/**
 * The call state machine of API.md:
 *   queued → initiated → ringing → in_progress → completed
 * and the other terminal states busy, no_answer, failed, canceled, rejected. Terminal states
 * never change: every transition is one guarded UPDATE (`WHERE status = ANY(allowed)`), so of
 * concurrent or reordered carrier callbacks only the forward ones apply.
 */
export const liveStatuses = ["queued", "initiated", "ringing", "in_progress"] as const;
export const terminalStatuses = [
  "completed",
  "busy",
  "no_answer",
  "failed",
  "canceled",
  "rejected",
] as const;
export const callStatuses = [...liveStatuses, ...terminalStatuses] as const;

export type LiveStatus = (typeof liveStatuses)[number];
export type TerminalStatus = (typeof terminalStatuses)[number];
export type CallStatus = (typeof callStatuses)[number];

export const hangupCauses = [
  "normal_clearing",
  "user_busy",
  "no_answer",
  "timeout",
  "time_limit",
  "originator_cancel",
  "call_rejected",
  "no_route",
  "network_error",
] as const;
export type HangupCause = (typeof hangupCauses)[number];

export const hangupSources = ["caller", "callee", "platform"] as const;
export type HangupSource = (typeof hangupSources)[number];

export const callDirections = ["outbound", "inbound"] as const;
export type CallDirection = (typeof callDirections)[number];

export const isCallStatus = (value: string): value is CallStatus =>
  (callStatuses as readonly string[]).includes(value);

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
      return "failed";
  }
}

/** Why a call ended, as the carrier or the platform reports it. */
export interface Hangup {
  cause: HangupCause;
  source: HangupSource;
  sipCode: number | null;
}
