import { call, type Backends } from "../backends.js";
import { idParam } from "../schemas/common.js";
import { toRoute } from "./call-mappers.js";
import { callResourceContext, noContent } from "./call-context.js";
import { created, ok, pageReply } from "./replies.js";
import { defineRoute, type RouteSpec } from "./route-spec.js";
import {
  listQuery,
  route,
  routeCreate,
  routesPage,
  routeUpdate,
} from "../schemas/call-resources.js";

/** Routes: which numbers ring under which agent and seat (calls:read / calls:write). */
export function callRouteRoutes(backends: Backends, deadlineMs: number): RouteSpec[] {
  const { cc, opts, accountId, id } = callResourceContext(backends, deadlineMs);
  const routePath = idParam("rte", "route_id");

  return [
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
        const r = await call(
          cc,
          (c) => c.createRoute,
          {
            accountId: accountId(ctx),
            name: ctx.body.name,
            numbers: ctx.body.numbers,
            agent: ctx.body.agent,
            seatId: ctx.body.seat_id,
          },
          opts(ctx),
        );
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
        const r = await call(
          cc,
          (c) => c.listRoutes,
          { accountId: accountId(ctx), limit: ctx.query.limit, cursor: ctx.query.cursor ?? "" },
          opts(ctx),
        );
        return pageReply(ctx.req, r.routes.map(toRoute), r.nextCursor);
      },
    }),
    defineRoute({
      method: "get",
      path: "/api/routes/{route_id}",
      operationId: "getRoute",
      summary: "Get a route",
      tag: "Routes",
      scope: "calls:read",
      params: routePath,
      success: { status: 200, description: "The route", schema: route },
      problems: ["not-found"],
      handler: async (ctx) => {
        const r = await call(
          cc,
          (c) => c.getRoute,
          { accountId: accountId(ctx), routeId: id(ctx, "route_id") },
          opts(ctx),
        );
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
        const r = await call(
          cc,
          (c) => c.updateRoute,
          {
            accountId: accountId(ctx),
            routeId: id(ctx, "route_id"),
            name: ctx.body.name,
            numbers: ctx.body.numbers ? { numbers: ctx.body.numbers } : undefined,
            agent: ctx.body.agent,
            seatId: ctx.body.seat_id === null ? "" : ctx.body.seat_id,
          },
          opts(ctx),
        );
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
        await call(
          cc,
          (c) => c.deleteRoute,
          { accountId: accountId(ctx), routeId: id(ctx, "route_id") },
          opts(ctx),
        );
        return noContent;
      },
    }),
  ];
}
