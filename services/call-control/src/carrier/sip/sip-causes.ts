import type { Hangup, HangupSource } from "../../calls/states.js";

/**
 * How a final failure response of an INVITE ends the call (docs/api.md "Voice over SIP"):
 * 486/600 busy; 408/480/487 no answer; 403/404/484/603 rejected; every other 4xx/5xx/6xx a
 * network error. `sip_code` keeps the code. `source` is the leg that answered: the seat's phone
 * is the caller's side of an outbound call, the trunk the callee's.
 */
export function hangupForStatus(status: number, source: HangupSource): Hangup {
  switch (status) {
    case 486:
    case 600:
      return { cause: "user_busy", source, sipCode: status };
    case 408:
    case 480:
    case 487:
      return { cause: "no_answer", source, sipCode: status };
    case 403:
    case 404:
    case 484:
    case 603:
      return { cause: "call_rejected", source, sipCode: status };
    default:
      return { cause: "network_error", source, sipCode: status };
  }
}

/** No final response at all: Timer B is a local 408; a request that could not be sent, 503. */
export function hangupForFailure(reason: "timeout" | "transport", source: HangupSource): Hangup {
  return reason === "timeout"
    ? { cause: "no_answer", source, sipCode: 408 }
    : { cause: "network_error", source: "platform", sipCode: 503 };
}
