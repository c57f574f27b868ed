import type { inventory } from "@switchboard/proto";
import { call, type Backends } from "../backends.js";
import { idParam } from "../schemas/common.js";
import {
  assignRequest,
  assignResponse,
  hold,
  holdRequest,
  listQuery,
  numbersPage,
  phoneNumber,
  searchQuery,
} from "../schemas/numbers.js";
import { created, ok, pageReply } from "./replies.js";
import { defineRoute, type HandlerContext, type RouteSpec } from "./route-spec.js";

const toNumber = (n: inventory.PhoneNumber | undefined) => ({
  id: n?.id ?? "",
  number: n?.number ?? "",
  country: n?.country ?? "",
  region: n?.region ?? "",
  locality: n?.locality ?? "",
  area_code: n?.areaCode ?? "",
  type: n?.type ?? "",
  capabilities: n?.capabilities ?? [],
  status: n?.status ?? "",
  ...(n?.status === "assigned"
    ? { seat_id: n.seatId ?? null, assigned_at: n.assignedAt ?? null }
    : {}),
});

const toHold = (h: inventory.Hold | undefined) => ({
  id: h?.id ?? "",
  number_id: h?.numberId ?? "",
  number: h?.number ?? "",
  status: h?.status ?? "",
  expires_at: h?.expiresAt ?? "",
  created_at: h?.createdAt ?? "",
  released_at: h?.releasedAt ?? null,
  converted_at: h?.convertedAt ?? null,
});

export function numberRoutes(backends: Backends, deadlineMs: number): RouteSpec[] {
  const inv = backends.inventory;
  const opts = (ctx: HandlerContext<unknown, unknown, unknown>) => ({
    deadlineMs,
    requestId: ctx.requestId,
    idempotencyKey: ctx.idempotencyKey,
    principal: ctx.principal,
  });
  const accountId = (ctx: HandlerContext<unknown, unknown, unknown>) =>
    ctx.principal?.accountId ?? "";
  const holdPath = idParam("hld", "hold_id");

  return [
    defineRoute({
      method: "get",
      path: "/api/numbers/search",
      operationId: "searchNumbers",
      summary: "Search available numbers",
      description: "Available numbers matching every given filter, ordered by number ascending.",
      tag: "Numbers",
      scope: "numbers:read",
      query: searchQuery,
      paginated: true,
      success: { status: 200, description: "A page of available numbers", schema: numbersPage },
      problems: ["invalid-cursor", "validation-failed"],
      handler: async (ctx) => {
        const q = ctx.query;
        const response = await call(
          inv,
          (c) => c.searchNumbers,
          {
            accountId: accountId(ctx),
            country: q.country?.toUpperCase(),
            type: q.type,
            prefix: q.prefix,
            pattern: q.pattern,
            minRepeat: q.min_repeat,
            repeatDigit: q.repeat_digit,
            region: q.region,
            locality: q.locality,
            areaCode: q.area_code,
            capabilities: q.capabilities ?? [],
            limit: q.limit,
            cursor: q.cursor ?? "",
          },
          opts(ctx),
        );
        return pageReply(ctx.req, response.numbers.map(toNumber), response.nextCursor);
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/numbers/hold",
      operationId: "holdNumber",
      examples: { request: { number: "+14155550123" } },
      summary: "Hold an available number",
      description:
        "Atomic: of any number of concurrent holds on one available number exactly one succeeds.",
      tag: "Numbers",
      scope: "numbers:write",
      body: holdRequest,
      success: { status: 201, description: "The hold", schema: hold, headers: ["Location"] },
      problems: ["not-found", "number-unavailable", "hold-limit-reached", "validation-failed"],
      handler: async (ctx) => {
        const { hold: created_ } = await call(
          inv,
          (c) => c.createHold,
          { accountId: accountId(ctx), number: ctx.body.number, ttlSeconds: ctx.body.ttl_seconds },
          opts(ctx),
        );
        const body = toHold(created_);
        return created(`/v1/api/numbers/holds/${body.id}`, body);
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/numbers/holds/{hold_id}",
      operationId: "getHold",
      summary: "Get a hold",
      tag: "Numbers",
      scope: "numbers:read",
      params: holdPath,
      success: { status: 200, description: "The hold", schema: hold },
      problems: ["not-found"],
      handler: async (ctx) => {
        const response = await call(
          inv,
          (c) => c.getHold,
          { accountId: accountId(ctx), holdId: ctx.params.hold_id as string },
          opts(ctx),
        );
        return ok(toHold(response.hold));
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/numbers/holds/{hold_id}/release",
      operationId: "releaseHold",
      summary: "Release a hold",
      tag: "Numbers",
      scope: "numbers:write",
      params: holdPath,
      success: { status: 200, description: "The released hold", schema: hold },
      problems: ["not-found", "invalid-state"],
      handler: async (ctx) => {
        const response = await call(
          inv,
          (c) => c.releaseHold,
          { accountId: accountId(ctx), holdId: ctx.params.hold_id as string },
          opts(ctx),
        );
        return ok(toHold(response.hold));
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/numbers/holds/{hold_id}/assign",
      operationId: "assignHold",
      summary: "Assign a held number to the account",
      description:
        "Converts an active hold; the number is assigned to the account and optional seat.",
      tag: "Numbers",
      scope: "numbers:write",
      params: holdPath,
      body: assignRequest,
      success: { status: 200, description: "The converted hold", schema: assignResponse },
      problems: ["not-found", "invalid-state", "validation-failed"],
      handler: async (ctx) => {
        const response = await call(
          inv,
          (c) => c.assignHold,
          {
            accountId: accountId(ctx),
            holdId: ctx.params.hold_id as string,
            seatId: ctx.body?.seat_id,
          },
          opts(ctx),
        );
        return ok({ ...toHold(response.hold), phone_number: toNumber(response.number) });
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/numbers",
      operationId: "listNumbers",
      summary: "List the account's numbers",
      description: "Numbers assigned to the account, newest assignment first.",
      tag: "Numbers",
      scope: "numbers:read",
      query: listQuery,
      paginated: true,
      success: { status: 200, description: "A page of assigned numbers", schema: numbersPage },
      problems: ["invalid-cursor", "validation-failed"],
      handler: async (ctx) => {
        const response = await call(
          inv,
          (c) => c.listNumbers,
          { accountId: accountId(ctx), limit: ctx.query.limit, cursor: ctx.query.cursor ?? "" },
          opts(ctx),
        );
        return pageReply(ctx.req, response.numbers.map(toNumber), response.nextCursor);
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/numbers/{number_id}",
      operationId: "getNumber",
      summary: "Get one of the account's numbers",
      tag: "Numbers",
      scope: "numbers:read",
      params: idParam("num", "number_id"),
      success: { status: 200, description: "The number", schema: phoneNumber },
      problems: ["not-found"],
      handler: async (ctx) => {
        const response = await call(
          inv,
          (c) => c.getNumber,
          { accountId: accountId(ctx), numberIdOrE164: ctx.params.number_id as string },
          opts(ctx),
        );
        return ok(toNumber(response.number));
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/numbers/{number_id}/release",
      operationId: "releaseNumber",
      summary: "Return an assigned number to the inventory",
      tag: "Numbers",
      scope: "numbers:write",
      params: idParam("num", "number_id"),
      success: { status: 200, description: "The released number", schema: phoneNumber },
      problems: ["not-found", "invalid-state"],
      handler: async (ctx) => {
        const response = await call(
          inv,
          (c) => c.releaseNumber,
          { accountId: accountId(ctx), numberId: ctx.params.number_id as string },
          opts(ctx),
        );
        return ok(toNumber(response.number));
      },
    }),
  ];
}
