import { wire } from "@switchboard/proto";
import { idParam } from "../schemas/common.js";
import { usageEvent, usageEventsPage, usageEventsQuery } from "../schemas/usage.js";
import { ok, pageReply } from "./replies.js";
import { defineRoute, type RouteSpec } from "../http/route-spec.js";
import { toUsageEvent } from "./views/usage.js";

const listDescription = [
  "The account's signed usage records, newest first (by occurred_at, then id), keyset-paginated:",
  "a walk through the pages never skips or repeats a record while records are added.",
  "Filters combine; `since` is inclusive and `until` exclusive (Stripe's gte/lt); `kind` takes one kind.",
  "Every reply of the API lands one api.request record, written before the reply is sent;",
  "records of public and unauthenticated requests belong to the platform's own account.",
  "A record may appear a moment after its reply: it is queued, then signed and stored.",
  "Verify `signature` with the key `kid` from /.well-known/jwks.json (JWS, detached payload",
  "= RFC 8785 canonical JSON of the record without `signature`).",
].join(" ");

/** The account's signed usage records (usage:read). */
export const usageRoutes: RouteSpec[] = [
  defineRoute({
    method: "get",
    path: "/api/usage/events",
    operationId: "listUsageEvents",
    summary: "List usage records",
    description: listDescription,
    tag: "Usage",
    scope: "usage:read",
    query: usageEventsQuery,
    paginated: true,
    success: { status: 200, description: "A page of usage records", schema: usageEventsPage },
    problems: ["invalid-cursor", "validation-failed"],
    handler: async (ctx) => {
      const q = ctx.query;
      const response = await ctx.rpc.usage((c) => c.listUsageEvents, {
        kind: q.kind && wire.usageKind.of(q.kind),
        resourceId: q.resource_id,
        since: q.since,
        until: q.until,
        limit: q.limit,
        cursor: q.cursor ?? "",
      });
      return pageReply(ctx.req, response.records.map(toUsageEvent), response.nextCursor);
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/usage/events/{id}",
    operationId: "getUsageEvent",
    summary: "Get a usage record",
    description: "One of the account's records; another account's record is 404.",
    tag: "Usage",
    scope: "usage:read",
    params: idParam("use", "id"),
    success: { status: 200, description: "The usage record", schema: usageEvent },
    problems: ["not-found"],
    handler: async (ctx) => {
      const response = await ctx.rpc.usage((c) => c.getUsageEvent, { id: ctx.params.id });
      return ok(toUsageEvent(response.record));
    },
  }),
];
