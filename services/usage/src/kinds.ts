import { wire } from "@switchboard/proto";

/** The record kinds of docs/api.md ("Usage") and the unit each one counts in. */
export const recordKinds = wire.usageKind.values;
export type RecordKind = wire.UsageKindValue;

export type FactKind = Exclude<RecordKind, "api.request">;

export const isRecordKind = wire.usageKind.is;

export const isFactKind = (value: string): value is FactKind =>
  value !== "api.request" && isRecordKind(value);

export const unitOf: Record<RecordKind, wire.UsageUnitValue> = {
  "api.request": "request",
  "number.held": "hold",
  "number.assigned": "number",
  "call.placed": "call",
  "call.completed": "second",
  "message.sent": "segment",
  "webhook.delivered": "delivery",
  "smoke.run": "run",
};

/**
 * What a business fact's event `data` contributes. `quantity` names the member holding the
 * quantity (a whole number ≥ 0) for the kinds that measure something; every other kind counts 1.
 * `attributes` is an allow-list: only these members are copied onto the record (never message
 * bodies, secrets or anything a producer adds later without saying so here).
 */
export interface FactContract {
  quantity?: string;
  attributes: readonly string[];
}

export const factContracts: Record<FactKind, FactContract> = {
  "number.held": { attributes: ["number_id", "number", "hold_id", "expires_at"] },
  "number.assigned": { attributes: ["number_id", "number", "hold_id", "seat_id"] },
  "call.placed": {
    attributes: ["call_id", "direction", "to", "from", "agent", "seat_id", "attestation"],
  },
  "call.completed": {
    quantity: "duration_seconds",
    attributes: [
      "call_id",
      "direction",
      "to",
      "from",
      "agent",
      "seat_id",
      "status",
      "hangup_cause",
      "hangup_source",
      "answered_at",
      "ended_at",
    ],
  },
  "message.sent": {
    quantity: "segments",
    attributes: [
      "message_id",
      "channel",
      "to",
      "from",
      "encoding",
      "template_id",
      "template_version",
    ],
  },
  "webhook.delivered": {
    attributes: [
      "delivery_id",
      "subscription_id",
      "event_id",
      "event_type",
      "attempt",
      "status_code",
    ],
  },
  "smoke.run": { attributes: ["smoke_id", "status", "duration_ms"] },
};
