import { isId, UnrecoverableJobError, type EventEnvelope } from "@switchboard/kit";
import { factContracts, isFactKind, unitOf } from "./kinds.js";
import type { RecordDraft } from "./ledger-record.js";
import { normalizeTime } from "./timestamps.js";

const text = (value: unknown): string | null =>
  typeof value === "string" && value !== "" && value.length <= 255 ? value : null;

/**
 * The record of a business fact from its outbox event: the event's time, account and resource,
 * the quantity its kind measures, and the allow-listed members of its data. Returns undefined
 * for an event type the ledger does not record. An event that lacks its quantity is a producer
 * bug: it fails for good (UnrecoverableJobError, kept in the failed set) rather than being
 * recorded with an invented number.
 */
export function factDraft(event: EventEnvelope<Record<string, unknown>>): RecordDraft | undefined {
  if (!isFactKind(event.type)) return undefined;
  const contract = factContracts[event.type];
  const data = event.data ?? {};
  const occurredAt = normalizeTime(event.timestamp);
  if (!occurredAt) throw new UnrecoverableJobError(`event ${event.id} has no RFC 3339 timestamp`);
  if (!text(event.account_id)) throw new UnrecoverableJobError(`event ${event.id} has no account`);
  let quantity = 1;
  if (contract.quantity) {
    const value = data[contract.quantity];
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
      throw new UnrecoverableJobError(
        `${event.type} event ${event.id} needs data.${contract.quantity} as a whole number ≥ 0`,
      );
    }
    quantity = value;
  }
  const attributes: Record<string, unknown> = {};
  for (const name of contract.attributes) {
    if (data[name] !== undefined) attributes[name] = data[name];
  }
  const requestId = text(data.request_id);
  return {
    kind: event.type,
    occurred_at: occurredAt,
    account_id: event.account_id,
    principal: text(data.principal),
    request_id: requestId && isId(requestId, "req") ? requestId : null,
    resource_id: text(event.resource_id),
    method: null,
    route: null,
    status: null,
    replayed: null,
    quantity,
    unit: unitOf[event.type],
    attributes,
    eventId: event.id,
  };
}
