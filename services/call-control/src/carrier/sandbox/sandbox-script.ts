import type { Hangup } from "../../calls/states.js";

/**
 * The sandbox network of docs/api.md, as data: what a destination does after the INVITE, as events
 * at offsets from the dial. Destinations in +1555010xxxx behave by their last digit:
 *   0 rings, answers, and the callee hangs up after SANDBOX_CALL_SECONDS (normal_clearing);
 *   1 is busy (486); 2 rings and the far end gives up after SANDBOX_CALL_SECONDS (480, no
 *   answer); 3 fails (503, network_error); 4 rings and declines (603, call_rejected).
 * Every other number rings, answers and stays up until it is hung up or hits its time limit.
 */
export type ScriptStep =
  | { event: "ringing"; afterMs: number }
  | { event: "answered"; afterMs: number }
  | { event: "ended"; afterMs: number; hangup: Hangup };

export interface SandboxTiming {
  /** Between the INVITE and the first response, and between ringing and the answer. */
  ringDelayMs: number;
  /** How long an answered `0` call lasts, and how long a `2` call rings before giving up. */
  callSeconds: number;
}

const sandboxRange = /^\+1555010\d{4}$/;

export function sandboxScript(to: string, timing: SandboxTiming): ScriptStep[] {
  const d = timing.ringDelayMs;
  const callMs = Math.round(timing.callSeconds * 1000);
  const digit = sandboxRange.test(to) ? to.at(-1) : undefined;
  switch (digit) {
    case "0":
      return [
        { event: "ringing", afterMs: d },
        { event: "answered", afterMs: 2 * d },
        {
          event: "ended",
          afterMs: 2 * d + callMs,
          hangup: { cause: "normal_clearing", source: "callee", sipCode: 200 },
        },
      ];
    case "1":
      return [
        {
          event: "ended",
          afterMs: d,
          hangup: { cause: "user_busy", source: "callee", sipCode: 486 },
        },
      ];
    case "2":
      return [
        { event: "ringing", afterMs: d },
        {
          event: "ended",
          afterMs: d + callMs,
          hangup: { cause: "no_answer", source: "callee", sipCode: 480 },
        },
      ];
    case "3":
      return [
        {
          event: "ended",
          afterMs: d,
          hangup: { cause: "network_error", source: "callee", sipCode: 503 },
        },
      ];
    case "4":
      return [
        { event: "ringing", afterMs: d },
        {
          event: "ended",
          afterMs: 2 * d,
          hangup: { cause: "call_rejected", source: "callee", sipCode: 603 },
        },
      ];
    default:
      return [
        { event: "ringing", afterMs: d },
        { event: "answered", afterMs: 2 * d },
      ];
  }
}

/** After an inbound call is answered, the sandbox caller talks SANDBOX_CALL_SECONDS and hangs up. */
export const inboundCallerHangup = (timing: SandboxTiming): ScriptStep => ({
  event: "ended",
  afterMs: Math.round(timing.callSeconds * 1000),
  hangup: { cause: "normal_clearing", source: "caller", sipCode: 200 },
});
