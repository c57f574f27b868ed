import { outboundCallLimits, type callcontrol } from "@switchboard/proto";
import { checkE164, checkIntRange, requestFingerprint, requireAccount } from "@switchboard/kit";
import { checkAgentName } from "../validation.js";

const { timeoutSeconds, timeLimitSeconds, clientStateMaxBytes } = outboundCallLimits;

/** A validated outbound call request with its defaults applied. */
export interface OutboundRequest {
  accountId: string;
  to: string;
  from: string;
  agent: string;
  seatId: string | undefined;
  timeoutSeconds: number;
  timeLimitSeconds: number;
  clientState: string | undefined;
  /** Checked by the webhook service (its SSRF guard) before the request got here. */
  statusCallback: { url: string; events: string[] } | undefined;
  /** The request's fingerprint: one Idempotency-Key, one request. */
  fingerprint: string;
}

export function parseOutboundRequest(
  request: callcontrol.CreateOutboundCallRequest,
): OutboundRequest {
  const errors = requireAccount(request.accountId);
  checkE164(errors, "#/to", request.to);
  checkE164(errors, "#/from", request.from);
  checkAgentName(errors, "#/agent", request.agent);
  if (request.seatId !== undefined && !/^seat_[0-9a-z]{26}$/.test(request.seatId)) {
    errors.add("#/seat_id", "must be a seat id (seat_…)");
  }
  checkIntRange(
    errors,
    "#/timeout_seconds",
    request.timeoutSeconds,
    timeoutSeconds.min,
    timeoutSeconds.max,
  );
  checkIntRange(
    errors,
    "#/time_limit_seconds",
    request.timeLimitSeconds,
    timeLimitSeconds.min,
    timeLimitSeconds.max,
  );
  if (
    request.clientState !== undefined &&
    Buffer.byteLength(request.clientState) > clientStateMaxBytes
  ) {
    errors.add("#/client_state", `must be at most ${clientStateMaxBytes} bytes (UTF-8)`);
  }
  const callback = request.statusCallback;
  if (callback && (callback.url === "" || callback.url.length > 2048)) {
    errors.add("#/status_callback/url", "must be a URL of at most 2048 characters");
  }
  errors.throwIfAny();
  const parsed = {
    accountId: request.accountId,
    to: request.to,
    from: request.from,
    agent: request.agent,
    seatId: request.seatId,
    timeoutSeconds: request.timeoutSeconds ?? timeoutSeconds.default,
    timeLimitSeconds: request.timeLimitSeconds ?? timeLimitSeconds.default,
    clientState: request.clientState,
    statusCallback: callback && { url: callback.url, events: [...callback.events] },
  };
  return {
    ...parsed,
    fingerprint: requestFingerprint("create-outbound-call", {
      ...parsed,
      seatId: parsed.seatId ?? null,
      clientState: parsed.clientState ?? null,
      statusCallback: parsed.statusCallback ?? null,
    }),
  };
}
