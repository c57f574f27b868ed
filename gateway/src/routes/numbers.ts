import { wire } from "@switchboard/proto";
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
import { defineRoute, type RouteSpec } from "../http/route-spec.js";
import { toHold, toNumber } from "./views/numbers.js";
import { story, storyAvailableNumber, storyHold, storyNumber } from "../schemas/story.js";

const holdPath = idParam("hld", "hold_id");

/** Searching, holding and assigning numbers (numbers:read / numbers:write). */
export const numberRoutes: RouteSpec[] = [
  defineRoute({
    method: "get",
    path: "/api/numbers/search",
    operationId: "searchNumbers",
    summary: "Search available numbers",
    description: "Available numbers matching every given filter, ordered by number ascending.",
    tag: "Numbers",
    scope: "numbers:read",
    query: searchQuery,
    examples: {
      query: { country: "US", capabilities: "voice,sms", limit: 5 },
      response: { data: [storyAvailableNumber], next_cursor: story.nextCursor, has_more: true },
    },
    paginated: true,
    success: { status: 200, description: "A page of available numbers", schema: numbersPage },
    problems: ["invalid-cursor", "validation-failed"],
    handler: async (ctx) => {
      const q = ctx.query;
      const response = await ctx.rpc.inventory((c) => c.searchNumbers, {
        country: q.country?.toUpperCase(),
        type: q.type && wire.numberType.of(q.type),
        prefix: q.prefix,
        pattern: q.pattern,
        minRepeat: q.min_repeat,
        repeatDigit: q.repeat_digit,
        region: q.region,
        locality: q.locality,
        areaCode: q.area_code,
        capabilities: (q.capabilities ?? []).map(wire.capability.of),
        limit: q.limit,
        cursor: q.cursor ?? "",
      });
      return pageReply(ctx.req, response.numbers.map(toNumber), response.nextCursor);
    },
  }),
  defineRoute({
    method: "post",
    path: "/api/numbers/hold",
    operationId: "holdNumber",
    examples: { request: { number: story.ours }, response: storyHold },
    summary: "Hold an available number",
    description:
      "Atomic: of any number of concurrent holds on one available number exactly one succeeds.",
    tag: "Numbers",
    scope: "numbers:write",
    body: holdRequest,
    success: { status: 201, description: "The hold", schema: hold, headers: ["Location"] },
    problems: ["not-found", "number-unavailable", "hold-limit-reached", "validation-failed"],
    handler: async (ctx) => {
      const { hold: created_ } = await ctx.rpc.inventory((c) => c.createHold, {
        number: ctx.body.number,
        ttlSeconds: ctx.body.ttl_seconds,
      });
      const body = toHold(created_);
      return created(`/v1/api/numbers/holds/${body.id}`, body);
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/numbers/holds/{hold_id}",
    operationId: "getHold",
    summary: "Get a hold",
    description:
      "One of the account's holds with its status (`active`, `converted`, `released`, `expired`) and when it expires.",
    tag: "Numbers",
    scope: "numbers:read",
    params: holdPath,
    success: { status: 200, description: "The hold", schema: hold },
    problems: ["not-found"],
    handler: async (ctx) => {
      const response = await ctx.rpc.inventory((c) => c.getHold, { holdId: ctx.params.hold_id });
      return ok(toHold(response.hold));
    },
  }),
  defineRoute({
    method: "post",
    path: "/api/numbers/holds/{hold_id}/release",
    operationId: "releaseHold",
    summary: "Release a hold",
    description:
      "Ends an active hold: the number is available to anyone again at once. A hold that is no longer active (converted, released or expired) is 409 invalid-state.",
    tag: "Numbers",
    scope: "numbers:write",
    params: holdPath,
    examples: {
      response: { ...storyHold, status: "released", released_at: "2026-11-24T21:47:02.518Z" },
    },
    success: { status: 200, description: "The released hold", schema: hold },
    problems: ["not-found", "invalid-state"],
    handler: async (ctx) => {
      const response = await ctx.rpc.inventory((c) => c.releaseHold, {
        holdId: ctx.params.hold_id,
      });
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
    examples: {
      request: { seat_id: story.seatId },
      response: {
        ...storyHold,
        status: "converted",
        converted_at: storyNumber.assigned_at,
        phone_number: storyNumber,
      },
    },
    success: { status: 200, description: "The converted hold", schema: assignResponse },
    problems: ["not-found", "invalid-state", "validation-failed"],
    handler: async (ctx) => {
      const response = await ctx.rpc.inventory((c) => c.assignHold, {
        holdId: ctx.params.hold_id,
        seatId: ctx.body?.seat_id,
      });
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
      const response = await ctx.rpc.inventory((c) => c.listNumbers, {
        limit: ctx.query.limit,
        cursor: ctx.query.cursor ?? "",
      });
      return pageReply(ctx.req, response.numbers.map(toNumber), response.nextCursor);
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/numbers/{number_id}",
    operationId: "getNumber",
    summary: "Get one of the account's numbers",
    description:
      "One number assigned to the account, with its capabilities and seat; 404 for a number the account does not hold.",
    tag: "Numbers",
    scope: "numbers:read",
    params: idParam("num", "number_id"),
    success: { status: 200, description: "The number", schema: phoneNumber },
    problems: ["not-found"],
    handler: async (ctx) => {
      const response = await ctx.rpc.inventory((c) => c.getNumber, {
        numberIdOrE164: ctx.params.number_id,
      });
      return ok(toNumber(response.number));
    },
  }),
  defineRoute({
    method: "post",
    path: "/api/numbers/{number_id}/release",
    operationId: "releaseNumber",
    summary: "Return an assigned number to the inventory",
    description:
      "The number leaves the account (and its seat) and is available to search and hold again; a number the account does not hold is 404. Calls and messages from it are refused within a second of the reply, on every replica.",
    tag: "Numbers",
    scope: "numbers:write",
    params: idParam("num", "number_id"),
    examples: { response: storyAvailableNumber },
    success: { status: 200, description: "The released number", schema: phoneNumber },
    problems: ["not-found", "invalid-state"],
    handler: async (ctx) => {
      const response = await ctx.rpc.inventory((c) => c.releaseNumber, {
        numberId: ctx.params.number_id,
      });
      return ok(toNumber(response.number));
    },
  }),
];
