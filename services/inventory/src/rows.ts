import { wire, type inventory } from "@switchboard/proto";
import { capabilitiesOf } from "./capabilities.js";

/** Database rows and their mapping to the contract's messages (times as RFC 3339 UTC). */
export interface NumberRow {
  id: string;
  e164: string;
  country: string;
  region: string | null;
  locality: string | null;
  area_code: string;
  type: wire.NumberTypeValue;
  capabilities: number;
  status?: wire.NumberStatusValue;
  seat_id?: string | null;
  assigned_at?: Date | null;
}

export interface HoldRow {
  id: string;
  account_id: string;
  number_id: string;
  e164: string;
  /** The effective status: an active hold past expires_at reads `expired`. */
  status: wire.HoldStatusValue;
  expires_at: Date;
  created_at: Date;
  released_at: Date | null;
  converted_at: Date | null;
  idempotency_key?: string | null;
}

export const rfc3339 = (time: Date): string => time.toISOString();

/** Columns of a number with its status as of now. */
export const numberColumns = `n.id, n.e164, n.country, n.region, n.locality, n.area_code, n.type,
  n.capabilities, n.seat_id, n.assigned_at,
  CASE WHEN n.assigned_account IS NOT NULL THEN 'assigned'
       WHEN n.held_until > now() THEN 'held' ELSE 'available' END AS status`;

/** Columns of a hold with lazy expiry applied. */
export const holdColumns = `h.id, h.account_id, h.number_id, h.e164, h.expires_at, h.created_at,
  h.released_at, h.converted_at, h.idempotency_key,
  CASE WHEN h.status = 'active' AND h.expires_at <= now() THEN 'expired' ELSE h.status END AS status`;

export function toPhoneNumber(row: NumberRow): inventory.PhoneNumber {
  const assigned = row.status === "assigned";
  return {
    id: row.id,
    number: row.e164,
    country: row.country,
    region: row.region ?? "",
    locality: row.locality ?? "",
    areaCode: row.area_code,
    type: wire.numberType.of(row.type),
    capabilities: capabilitiesOf(row.capabilities).map(wire.capability.of),
    status: wire.numberStatus.of(row.status ?? "available"),
    seatId: assigned ? (row.seat_id ?? undefined) : undefined,
    assignedAt: assigned && row.assigned_at ? rfc3339(row.assigned_at) : undefined,
  };
}

export function toHold(row: HoldRow): inventory.Hold {
  return {
    id: row.id,
    numberId: row.number_id,
    number: row.e164,
    status: wire.holdStatus.of(row.status),
    expiresAt: rfc3339(row.expires_at),
    createdAt: rfc3339(row.created_at),
    releasedAt: row.released_at ? rfc3339(row.released_at) : undefined,
    convertedAt: row.converted_at ? rfc3339(row.converted_at) : undefined,
  };
}
