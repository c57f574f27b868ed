import { wire } from "@switchboard/proto";
import { idParam } from "../schemas/common.js";
import { created, noContent, ok, pageReply } from "./replies.js";
import { defineRoute, type RouteSpec } from "../http/route-spec.js";
import { toSeat, toSeatWithSipPassword } from "./views/calls.js";
import {
  listQuery,
  seat,
  seatCreate,
  seatsPage,
  seatUpdate,
  seatWithSipPassword,
} from "../schemas/call-resources.js";

const seatPath = idParam("seat", "seat_id");

/** Seats: where calls are handled, with their concurrent-call limit (calls:read / calls:write). */
export const callSeatRoutes: RouteSpec[] = [
  defineRoute({
    method: "post",
    path: "/api/seats",
    operationId: "createSeat",
    summary: "Create a seat",
    description:
      "A seat takes at most max_concurrent_calls live calls at once (409 seat-busy beyond). It is also a SIP endpoint: its phone registers sip:<sip.username>@<sip.domain> with digest authentication, with the password in sip.password, which only this response (and rotate-credentials) shows.",
    tag: "Seats",
    scope: "calls:write",
    body: seatCreate,
    success: {
      status: 201,
      description: "The seat, with its SIP password (shown once)",
      schema: seatWithSipPassword,
      headers: ["Location"],
    },
    problems: ["validation-failed"],
    handler: async (ctx) => {
      const response = await ctx.rpc.callControl((c) => c.createSeat, {
        name: ctx.body.name,
        maxConcurrentCalls: ctx.body.max_concurrent_calls,
        status: ctx.body.status && wire.seatStatus.of(ctx.body.status),
      });
      const body = toSeatWithSipPassword(response.seat, response.sipPassword);
      return created(`/v1/api/seats/${body.id}`, body);
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/seats",
    operationId: "listSeats",
    summary: "List seats",
    description: "Newest first.",
    tag: "Seats",
    scope: "calls:read",
    query: listQuery,
    paginated: true,
    success: { status: 200, description: "A page of seats", schema: seatsPage },
    problems: ["invalid-cursor", "validation-failed"],
    handler: async (ctx) => {
      const r = await ctx.rpc.callControl((c) => c.listSeats, {
        limit: ctx.query.limit,
        cursor: ctx.query.cursor ?? "",
      });
      return pageReply(ctx.req, r.seats.map(toSeat), r.nextCursor);
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/seats/{seat_id}",
    operationId: "getSeat",
    summary: "Get a seat",
    description: "One seat of the account with its limits, status and SIP registration.",
    tag: "Seats",
    scope: "calls:read",
    params: seatPath,
    success: { status: 200, description: "The seat", schema: seat },
    problems: ["not-found"],
    handler: async (ctx) => {
      const r = await ctx.rpc.callControl((c) => c.getSeat, { seatId: ctx.params.seat_id });
      return ok(toSeat(r.seat));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/api/seats/{seat_id}",
    operationId: "updateSeat",
    summary: "Update a seat",
    description:
      "Lowering max_concurrent_calls below the live calls keeps them; new calls wait for room.",
    tag: "Seats",
    scope: "calls:write",
    params: seatPath,
    body: seatUpdate,
    success: { status: 200, description: "The seat", schema: seat },
    problems: ["not-found", "validation-failed"],
    handler: async (ctx) => {
      const r = await ctx.rpc.callControl((c) => c.updateSeat, {
        seatId: ctx.params.seat_id,
        name: ctx.body.name,
        maxConcurrentCalls: ctx.body.max_concurrent_calls,
        status: ctx.body.status && wire.seatStatus.of(ctx.body.status),
      });
      return ok(toSeat(r.seat));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/api/seats/{seat_id}",
    operationId: "deleteSeat",
    summary: "Delete a seat",
    description: "409 conflict while a route uses the seat or a live call counts against it.",
    tag: "Seats",
    scope: "calls:write",
    params: seatPath,
    success: { status: 204, description: "Deleted" },
    problems: ["not-found", "conflict"],
    handler: async (ctx) => {
      await ctx.rpc.callControl((c) => c.deleteSeat, { seatId: ctx.params.seat_id });
      return noContent;
    },
  }),
  defineRoute({
    method: "post",
    path: "/api/seats/{seat_id}/sip/rotate-credentials",
    operationId: "rotateSeatSipCredentials",
    summary: "Rotate a seat's SIP password",
    description:
      "Returns the seat with a new SIP password in sip.password (shown only here). The old password stops working at once and the seat's registrations are removed: its phone must register again with the new one. A seat created before seats had SIP credentials gets its first password this way.",
    tag: "Seats",
    scope: "calls:write",
    params: seatPath,
    success: {
      status: 200,
      description: "The seat with its new SIP password",
      schema: seatWithSipPassword,
    },
    problems: ["not-found"],
    handler: async (ctx) => {
      const r = await ctx.rpc.callControl((c) => c.rotateSeatSipCredentials, {
        seatId: ctx.params.seat_id,
      });
      return ok(toSeatWithSipPassword(r.seat, r.sipPassword));
    },
  }),
];
