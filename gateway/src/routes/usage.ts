import { wire, type usage } from "@switchboard/proto";
import { call, type Backends } from "../backends.js";
import { idParam } from "../schemas/common.js";
import { usageEvent, usageEventsPage, usageEventsQuery } from "../schemas/usage.js";
import { ok, pageReply } from "./replies.js";
import { defineRoute, type HandlerContext, type RouteSpec } from "./route-spec.js";

/**
 * The REST item of a record: every member present, null where it does not apply, so the item
 * minus `signature` is exactly the object whose canonical JSON was signed.
 */
export const toUsageEvent = (r: usage.UsageRecord | undefined) => ({
  id: r?.id ?? "",
  kind: (r && wire.usageKind.spell(r.kind)) ?? "",
  occurred_at: r?.occurredAt ?? "",
  account_id: r?.accountId ?? "",
  principal: r?.principal ?? null,
  request_id: r?.requestId ?? null,
  resource_id: r?.resourceId ?? null,
  method: r?.method ?? null,
  route: r?.route ?? null,
  status: r?.status ?? null,
  replayed: r?.replayed ?? null,
  quantity: r?.quantity ?? 0,
  unit: r?.unit ?? "",
  attributes: r?.attributes ?? {},
  kid: r?.kid ?? "",
  signature: r?.signature ?? "",
});

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

export function usageRoutes(backends: Backends, deadlineMs: number): RouteSpec[] {
  const ledger = backends.usage;
  const opts = (ctx: HandlerContext<unknown, unknown, unknown>) => ({
    deadlineMs,
    requestId: ctx.requestId,
    idempotencyKey: ctx.idempotencyKey,
    principal: ctx.principal,
  });
  const accountId = (ctx: HandlerContext<unknown, unknown, unknown>) =>
    ctx.principal?.accountId ?? "";

  return [
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
        const response = await call(
          ledger,
          (c) => c.listUsageEvents,
          {
            accountId: accountId(ctx),
            kind: q.kind && wire.usageKind.of(q.kind),
            resourceId: q.resource_id,
            since: q.since,
            until: q.until,
            limit: q.limit,
            cursor: q.cursor ?? "",
          },
          opts(ctx),
        );
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
        const response = await call(
          ledger,
          (c) => c.getUsageEvent,
          { accountId: accountId(ctx), id: ctx.params.id as string },
          opts(ctx),
        );
        return ok(toUsageEvent(response.record));
      },
    }),
  ];
}
