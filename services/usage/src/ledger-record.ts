import { wire, type usage } from "@switchboard/proto";
import type { RecordKind } from "./kinds.js";

/**
 * A ledger record as the API serves it (docs/api.md "Usage"), without `signature`: exactly the
 * object whose RFC 8785 canonical JSON is signed. Every member is always present; what does not
 * apply to a kind is null.
 */
export interface UnsignedRecord {
  id: string;
  kind: RecordKind;
  occurred_at: string;
  account_id: string;
  principal: string | null;
  request_id: string | null;
  resource_id: string | null;
  method: string | null;
  route: string | null;
  status: number | null;
  replayed: boolean | null;
  quantity: number;
  unit: wire.UsageUnitValue;
  attributes: Record<string, unknown>;
  kid: string;
}

export interface SignedRecord extends UnsignedRecord {
  signature: string;
}

/** What ingestion knows before signing: the record without id and kid, plus its source event. */
export interface RecordDraft extends Omit<UnsignedRecord, "id" | "kid"> {
  /** The outbox event a business fact came from (null for api.request). */
  eventId: string | null;
}

/** A signed record ready to be stored: the columns of usage.records. */
export interface LedgerRow {
  id: string;
  kind: RecordKind;
  occurredAt: string;
  accountId: string;
  requestId: string | null;
  eventId: string | null;
  resourceId: string | null;
  kid: string;
  /** The canonical JSON that was signed. */
  payload: string;
  signature: string;
}

/** A stored record back as the signed object (payload parsed, signature added). */
export function fromStored(payload: string, signature: string): SignedRecord {
  return { ...(JSON.parse(payload) as UnsignedRecord), signature };
}

const orUndefined = <T>(value: T | null): T | undefined => (value === null ? undefined : value);

export function toProtoRecord(record: SignedRecord): usage.UsageRecord {
  return {
    id: record.id,
    kind: wire.usageKind.of(record.kind),
    occurredAt: record.occurred_at,
    accountId: record.account_id,
    principal: orUndefined(record.principal),
    requestId: orUndefined(record.request_id),
    resourceId: orUndefined(record.resource_id),
    method: orUndefined(record.method),
    route: orUndefined(record.route),
    status: orUndefined(record.status),
    replayed: orUndefined(record.replayed),
    quantity: record.quantity,
    unit: wire.usageUnit.of(record.unit),
    attributes: record.attributes,
    kid: record.kid,
    signature: record.signature,
  };
}
