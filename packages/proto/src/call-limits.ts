/**
 * The outbound call's limits and defaults (docs/api.md "Calls"), written once: the gateway's
 * request schema states them to callers (and in the OpenAPI document), call-control checks them
 * again on the gRPC request and applies the defaults. Inbound calls take the same time limit.
 */
export const outboundCallLimits = {
  /** Ring timeout, seconds. */
  timeoutSeconds: { min: 5, max: 120, default: 30 },
  /** Longest talk time after answer, seconds. */
  timeLimitSeconds: { min: 1, max: 14_400, default: 14_400 },
  /** client_state: opaque, at most this many bytes of UTF-8 (1 KiB). */
  clientStateMaxBytes: 1024,
} as const;
