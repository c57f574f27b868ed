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

/** Calls (docs/api.md "Calls", "Carriers: the real networks and the sandbox"). */
const direction = z.enum(wire.callDirection.values);

export const call = z
  .object({
    id: resourceId("call"),
    direction,
    status: z.enum(wire.callStatus.values),
    to: e164,
    from: callerId,
    agent: z.string().nullable(),
    seat_id: resourceId("seat").nullable(),
    route_id: resourceId("rte").nullable().describe("Inbound: the route the call rings under"),
    stir_shaken: z
      .object({
        attestation: z.enum(wire.attestation.values),
        identity: z.string().describe("The PASSporT (RFC 8225/8588, ES256) handed to the carrier"),
      })
      .nullable()
      .describe("Outbound calls: the signed identity; null for inbound calls"),
    client_state: z.string().nullable(),
    timeout_seconds: z.number().int(),
    time_limit_seconds: z.number().int(),
    hangup_cause: z.enum(wire.hangupCause.values).nullable(),
    hangup_source: z.enum(wire.hangupSource.values).nullable(),
    sip_code: z.number().int().nullable(),
    early_media: z
      .boolean()
      .describe(
        "The far end sent early media (a 183 with SDP) that reached the other side before the answer",
      ),
    created_at: timestamp,
    answered_at: timestamp.nullable(),
    ended_at: timestamp.nullable(),
    duration_seconds: z
      .number()
      .int()
      .nullable()
      .describe("Answered to ended, rounded up; 0 for a call never answered; null while live"),
    status_callback: statusCallback,
  })
  .meta({ id: "Call" });

const {
  timeoutSeconds: timeout,
  timeLimitSeconds: timeLimit,
  clientStateMaxBytes,
} = outboundCallLimits;

export const outboundCallRequest = z
  .object({
    to: e164,
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
    direction: direction.optional(),
    status: z.enum(wire.callStatus.values).optional(),
    limit: limitParam,
    cursor: cursorParam,
  })
  .strict();

export const answerRequest = z
  .object({
    call_id: idOf("call", "must be a call id (call_…)"),
    route_id: idOf("rte", "must be a route id (rte_…)")
      .optional()
      .describe("Must be the call's route (else 409 invalid-state)"),
    agent: agentName.optional().describe("Default: the route's agent"),
  })
  .strict();

export const sandboxInboundRequest = z
  .object({ from: callerId, to: e164.describe("One of the account's numbers") })
  .strict();

export const callsPage = page(call).meta({ id: "CallPage" });

export const pemCertificate = z.string().describe("PEM-encoded X.509 certificate");
