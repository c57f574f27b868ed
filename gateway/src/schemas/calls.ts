import { outboundCallLimits, wire } from "@switchboard/proto";
import { z } from "zod";
import { agentName, seatId } from "./call-resources.js";
import {
  callerId,
  cursorParam,
  e164,
  idOf,
  limitParam,
  page,
  resourceId,
  statusCallback,
  statusCallbackRequest,
  timestamp,
} from "./common.js";
import { createdWindowQuery } from "./created-window.js";
import { story, storyCall, storyCertificate } from "./story.js";

/** Calls (docs/api.md "Calls", "Carriers: the real networks and the sandbox"). */
const direction = z.enum(wire.callDirection.values);

export const call = z
  .object({
    id: resourceId("call"),
    direction: direction.describe("outbound: placed through the API; inbound: from the network"),
    status: z
      .enum(wire.callStatus.values)
      .describe(
        "queued → initiated → ringing → in_progress → completed; or busy, no_answer, failed, canceled, rejected",
      ),
    to: e164.describe("The called number").meta({ examples: [story.callee] }),
    from: callerId,
    agent: z
      .string()
      .nullable()
      .describe("The name of the agent who placed or answered the call; null until answered")
      .meta({ examples: [story.agent] }),
    seat_id: resourceId("seat").nullable().describe("The seat the call rings or was placed from"),
    route_id: resourceId("rte").nullable().describe("Inbound: the route the call rings under"),
    stir_shaken: z
      .object({
        attestation: z
          .enum(wire.attestation.values)
          .describe("A: the account and the seat own `from`; B: the account owns it"),
        identity: z
          .string()
          .describe("The PASSporT (RFC 8225/8588, ES256) handed to the carrier")
          .meta({ examples: [story.passport] }),
      })
      .nullable()
      .describe("Outbound calls: the signed identity; null for inbound calls"),
    client_state: z
      .string()
      .nullable()
      .describe("The opaque value given when the call was placed, echoed on its events")
      .meta({ examples: ["order-4711"] }),
    timeout_seconds: z.number().int().describe("How long the destination may ring"),
    time_limit_seconds: z.number().int().describe("The longest talk time after the answer"),
    hangup_cause: z
      .enum(wire.hangupCause.values)
      .nullable()
      .describe("Why the call ended (null while live)"),
    hangup_source: z
      .enum(wire.hangupSource.values)
      .nullable()
      .describe("Who ended it: caller, callee or platform (null while live)"),
    sip_code: z
      .number()
      .int()
      .nullable()
      .describe("The final SIP status the network answered (200 for an answered call)"),
    early_media: z
      .boolean()
      .describe(
        "The far end sent early media (a 183 with SDP) that reached the other side before the answer",
      ),
    created_at: timestamp.describe("RFC 3339 UTC: when the call was created"),
    answered_at: timestamp.nullable().describe("RFC 3339 UTC: when it was answered; null if never"),
    ended_at: timestamp.nullable().describe("RFC 3339 UTC: when it ended; null while live"),
    duration_seconds: z
      .number()
      .int()
      .nullable()
      .describe("Answered to ended, rounded up; 0 for a call never answered; null while live"),
    status_callback: statusCallback,
  })
  .meta({ id: "Call", examples: [storyCall()] });

const {
  timeoutSeconds: timeout,
  timeLimitSeconds: timeLimit,
  clientStateMaxBytes,
} = outboundCallLimits;

export const outboundCallRequest = z
  .object({
    to: e164.describe("The number to call").meta({ examples: [story.callee] }),
    from: e164.describe("A number assigned to the account (else 422 caller-id-not-owned)"),
    agent: agentName.describe("The name of one of the account's agents"),
    seat_id: seatId.optional().describe("Default: the seat `from` is assigned to"),
    timeout_seconds: z
      .number()
      .int()
      .min(timeout.min)
      .max(timeout.max)
      .optional()
      .describe(`Ring timeout, ${timeout.min}–${timeout.max} (default ${timeout.default})`),
    time_limit_seconds: z
      .number()
      .int()
      .min(timeLimit.min)
      .max(timeLimit.max)
      .optional()
      .describe(
        `Longest talk time after answer, ${timeLimit.min}–${timeLimit.max} (default ${timeLimit.default})`,
      ),
    client_state: z
      .string()
      .refine(
        (value) => Buffer.byteLength(value) <= clientStateMaxBytes,
        `must be at most ${clientStateMaxBytes} bytes (UTF-8)`,
      )
      // At most N bytes is at most N characters: the bound a schema can state.
      .meta({ maxLength: clientStateMaxBytes })
      .optional()
      .describe("Opaque, at most 1 KiB; echoed on the call and its events"),
    status_callback: statusCallbackRequest("call").optional(),
  })
  .strict();

export const callsQuery = z
  .object({
    direction: direction.optional().describe("Only calls in this direction"),
    status: z.enum(wire.callStatus.values).optional().describe("Only calls in this status"),
    ...createdWindowQuery,
    limit: limitParam,
    cursor: cursorParam,
  })
  .strict();

export const answerRequest = z
  .object({
    call_id: idOf("call", "must be a call id (call_…)").describe(
      "The ringing inbound call to answer",
    ),
    route_id: idOf("rte", "must be a route id (rte_…)")
      .optional()
      .describe("Must be the call's route (else 409 invalid-state)"),
    agent: agentName.optional().describe("Default: the route's agent"),
  })
  .strict();

export const sandboxInboundRequest = z
  .object({
    from: callerId.meta({ examples: [story.callee] }),
    to: e164.describe("One of the account's numbers"),
  })
  .strict();

export const callsPage = page(call).meta({ id: "CallPage" });

export const pemCertificate = z
  .string()
  .describe("PEM-encoded X.509 certificate")
  .meta({ examples: [storyCertificate] });
