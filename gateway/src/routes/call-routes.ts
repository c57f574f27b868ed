import { idParam } from "../schemas/common.js";
import { created, noContent, ok, pageReply } from "./replies.js";
import { defineRoute, type RouteSpec } from "../http/route-spec.js";
import { toRoute } from "./views/calls.js";
import {
  listQuery,
  route,
  routeCreate,
  routesPage,
  routeUpdate,
} from "../schemas/call-resources.js";

const routePath = idParam("rte", "route_id");

/** Routes: which numbers ring under which agent and seat (calls:read / calls:write). */
export const callRouteRoutes: RouteSpec[] = [
  defineRoute({
    method: "post",
    path: "/api/routes",
    operationId: "createRoute",
    summary: "Create a route",
    description:
      "Inbound calls to the route's numbers ring under it. Every number must be assigned to the account (422 with a pointer to it); a number already in another route is 409 conflict.",
    tag: "Routes",
    scope: "calls:write",
    body: routeCreate,
    success: { status: 201, description: "The route", schema: route, headers: ["Location"] },
    problems: ["validation-failed", "conflict"],
    handler: async (ctx) => {
      const r = await ctx.rpc.callControl((c) => c.createRoute, {
        name: ctx.body.name,
        numbers: ctx.body.numbers,
        agent: ctx.body.agent,
        seatId: ctx.body.seat_id,
      });
      const body = toRoute(r.route);
      return created(`/v1/api/routes/${body.id}`, body);
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/routes",
    operationId: "listRoutes",
    summary: "List routes",
    description: "Newest first.",
    tag: "Routes",
    scope: "calls:read",
    query: listQuery,
    paginated: true,
    success: { status: 200, description: "A page of routes", schema: routesPage },
    problems: ["invalid-cursor", "validation-failed"],
    handler: async (ctx) => {
      const r = await ctx.rpc.callControl((c) => c.listRoutes, {
        limit: ctx.query.limit,
        cursor: ctx.query.cursor ?? "",
      });
      return pageReply(ctx.req, r.routes.map(toRoute), r.nextCursor);
    },
  }),
  defineRoute({
    method: "get",
    path: "/api/routes/{route_id}",
    operationId: "getRoute",
    summary: "Get a route",
    description: "One route of the account: its numbers, agent and seat.",
    tag: "Routes",
    scope: "calls:read",
    params: routePath,
    success: { status: 200, description: "The route", schema: route },
    problems: ["not-found"],
    handler: async (ctx) => {
      const r = await ctx.rpc.callControl((c) => c.getRoute, { routeId: ctx.params.route_id });
      return ok(toRoute(r.route));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/api/routes/{route_id}",
    operationId: "updateRoute",
    summary: "Update a route",
    description: "`numbers` replaces the route's numbers; `seat_id: null` removes the seat.",
    tag: "Routes",
    scope: "calls:write",
    params: routePath,
    body: routeUpdate,
    success: { status: 200, description: "The route", schema: route },
    problems: ["not-found", "validation-failed", "conflict"],
    handler: async (ctx) => {
      const r = await ctx.rpc.callControl((c) => c.updateRoute, {
        routeId: ctx.params.route_id,
        name: ctx.body.name,
        numbers: ctx.body.numbers ? { numbers: ctx.body.numbers } : undefined,
        agent: ctx.body.agent,
        seatId: ctx.body.seat_id === null ? "" : ctx.body.seat_id,
      });
      return ok(toRoute(r.route));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/api/routes/{route_id}",
    operationId: "deleteRoute",
    summary: "Delete a route",
    description:
      "Its numbers are free for other routes; calls to them are then rejected with no_route.",
    tag: "Routes",
    scope: "calls:write",
    params: routePath,
    success: { status: 204, description: "Deleted" },
    problems: ["not-found"],
    handler: async (ctx) => {
      await ctx.rpc.callControl((c) => c.deleteRoute, { routeId: ctx.params.route_id });
      return noContent;
    },
  }),
];
