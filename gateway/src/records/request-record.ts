import type { Request, Response } from "express";
import type { usage } from "@switchboard/proto";
import type { Principal } from "../auth/index.js";

declare module "express-serve-static-core" {
  interface Locals {
    /** Set by the record stage: who made the request (null: public route or not authenticated). */
    usagePrincipal?: Principal | null;
    /** Set by the record stage: the route template that answered. */
    usageRoute?: string;
    /** Set by the record stage: the id the request's path named. */
    usageResourceId?: string;
    /** Set by the record stage: the route answers even when its record cannot be stored. */
    answersWithoutRecord?: boolean;
  }
}

/** A prefixed, sortable id (`hld_01…`). */
const idPattern = /^[a-z]+_[0-9a-hjkmnp-tv-z]{26}$/;

/** The last path parameter that is a resource id, e.g. `hold_id` of `/api/numbers/holds/{hold_id}`. */
export function resourceIdIn(params: Record<string, unknown> | undefined): string | undefined {
  let found: string | undefined;
  for (const value of Object.values(params ?? {})) {
    if (typeof value === "string" && idPattern.test(value)) found = value;
  }
  return found;
}

/** The id a 201's Location names (the resource the request created). */
function createdResourceId(res: Response): string | undefined {
  if (res.statusCode !== 201) return undefined;
  const location = res.getHeader("location");
  if (typeof location !== "string") return undefined;
  const last = location.split("?")[0]!.split("/").pop() ?? "";
  return idPattern.test(last) ? last : undefined;
}

/** `/api/numbers/holds/:hold_id` (express) → `/api/numbers/holds/{hold_id}` (the route table's). */
const templateOf = (expressPath: unknown): string | undefined =>
  typeof expressPath === "string" ? expressPath.replace(/:([A-Za-z_]+)/g, "{$1}") : undefined;

export interface RecordContext {
  /** Wall-clock arrival (ms since the epoch). */
  arrivedAt: number;
  /** The account of public and unauthenticated requests (the platform's own). */
  platformAccount: string;
}

/**
 * The api.request record of a reply about to be sent. The route is the template that matched
 * (also for 405 and body-parsing failures), absent for an unknown path; the account is the
 * principal's, or the platform's own when no credential was verified.
 */
export function requestRecord(
  req: Request,
  res: Response,
  context: RecordContext,
): usage.RequestRecord {
  const principal = res.locals.usagePrincipal ?? null;
  const latencyMs = Number(process.hrtime.bigint() - req.startedAt) / 1e6;
  const route =
    res.locals.usageRoute ?? templateOf((req.route as { path?: unknown } | undefined)?.path);
  const resourceId = createdResourceId(res) ?? res.locals.usageResourceId;
  return {
    requestId: req.requestId,
    occurredAt: new Date(context.arrivedAt).toISOString(),
    accountId: principal?.accountId ?? context.platformAccount,
    principal: principal?.principalId,
    method: req.method.toUpperCase(),
    route,
    status: res.statusCode,
    latencyMs,
    replayed: res.locals.replayed === true,
    resourceId,
  };
}
