import { isId, type Logger } from "@switchboard/kit";
import { usage } from "@switchboard/proto";
import { unitOf } from "./kinds.js";
import type { RecordDraft } from "./ledger-record.js";
import { normalizeTime } from "./timestamps.js";

const methodPattern = /^[A-Z]{1,16}$/;
const maxText = 255;

/** Why a gateway record cannot enter the ledger, or undefined when it can. */
function problemWith(record: usage.RequestRecord): string | undefined {
  if (!isId(record.requestId, "req")) return "request_id is not a req_ id";
  if (normalizeTime(record.occurredAt) === undefined) return "occurred_at is not RFC 3339";
  if (record.accountId === "" || record.accountId.length > maxText) return "account_id is empty";
  if ((record.principal ?? "").length > maxText) return "principal is too long";
  if (!methodPattern.test(record.method)) return "method is not an HTTP method";
  if (record.route !== undefined && (!record.route.startsWith("/") || record.route.length > 512)) {
    return "route is not a path template";
  }
  if (!Number.isInteger(record.status) || record.status < 100 || record.status > 599) {
    return "status is not an HTTP status";
  }
  if (!Number.isFinite(record.latencyMs) || record.latencyMs < 0) return "latency_ms is negative";
  if ((record.resourceId ?? "").length > maxText) return "resource_id is too long";
  return undefined;
}

const roundMicros = (ms: number): number => Math.round(ms * 1000) / 1000;

/** The api.request draft of one gateway record. */
export function requestDraft(record: usage.RequestRecord): RecordDraft {
  return {
    kind: "api.request",
    occurred_at: normalizeTime(record.occurredAt)!,
    account_id: record.accountId,
    principal: record.principal ?? null,
    request_id: record.requestId,
    resource_id: record.resourceId ?? null,
    method: record.method,
    route: record.route ?? null,
    status: record.status,
    replayed: record.replayed,
    quantity: 1,
    unit: unitOf["api.request"],
    attributes: { latency_ms: roundMicros(record.latencyMs) },
    eventId: null,
  };
}

/**
 * The drafts of a batch of the gateway's records. A record the ledger cannot hold (only a
 * gateway bug makes one) is logged with its request id and left out; the others are stored.
 */
export function requestDrafts(
  records: readonly usage.RequestRecord[],
  logger: Logger,
): RecordDraft[] {
  const drafts: RecordDraft[] = [];
  for (const record of records) {
    const problem = problemWith(record);
    if (problem) {
      logger.error({ requestId: record.requestId, problem }, "usage record rejected");
      continue;
    }
    drafts.push(requestDraft(record));
  }
  return drafts;
}
