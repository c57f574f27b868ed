import { validationFailed, type FieldError } from "@switchboard/kit";
import { wire, type usage } from "@switchboard/proto";
import { recordKinds } from "./kinds.js";
import { normalizeTime } from "./timestamps.js";

export const defaultPageLimit = 50;
export const maxPageLimit = 200;

/** A listing's validated filters and page size. */
export interface ListFilters {
  accountId: string;
  kind: string | undefined;
  resourceId: string | undefined;
  /** Normalised RFC 3339 (UTC, ms): occurred_at >= since. */
  since: string | undefined;
  /** Normalised RFC 3339 (UTC, ms): occurred_at < until. */
  until: string | undefined;
  limit: number;
}

/** Validates ListUsageEvents' inputs; every failure at once as `validation-failed`. */
export function listFilters(request: usage.ListUsageEventsRequest): ListFilters {
  const errors: FieldError[] = [];
  const add = (name: string, detail: string) => errors.push({ pointer: `#/query/${name}`, detail });
  if (request.accountId.trim() === "" || request.accountId.length > 255) {
    errors.push({ pointer: "#/account_id", detail: "must name the account" });
  }
  const kind = request.kind && wire.usageKind.spell(request.kind);
  if (request.kind !== undefined && kind === undefined) {
    add("kind", `must be one of ${recordKinds.join(", ")}`);
  }
  if (
    request.resourceId !== undefined &&
    (request.resourceId === "" || request.resourceId.length > 255)
  ) {
    add("resource_id", "must be 1–255 characters");
  }
  const time = (name: string, value: string | undefined) => {
    if (value === undefined) return undefined;
    const normalized = normalizeTime(value);
    if (!normalized) add(name, "must be an RFC 3339 date-time such as 2026-11-21T00:00:00Z");
    return normalized;
  };
  const since = time("since", request.since);
  const until = time("until", request.until);
  if (since && until && since >= until) add("until", "must be later than since");
  const limit = request.limit === 0 ? defaultPageLimit : request.limit;
  if (!Number.isInteger(limit) || limit < 1 || limit > maxPageLimit) {
    add("limit", `must be an integer from 1 to ${maxPageLimit}`);
  }
  if (errors.length > 0) throw validationFailed(errors);
  return {
    accountId: request.accountId,
    kind,
    resourceId: request.resourceId,
    since,
    until,
    limit,
  };
}

/** The canonical form a cursor is bound to: the account and every filter. */
export const cursorBinding = (f: ListFilters): string =>
  JSON.stringify([
    "usage-events",
    f.accountId,
    f.kind ?? null,
    f.resourceId ?? null,
    f.since ?? null,
    f.until ?? null,
  ]);
