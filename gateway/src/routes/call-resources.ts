import { callAgentRoutes } from "./call-agents.js";
import { callRouteRoutes } from "./call-routes.js";
import { callSeatRoutes } from "./call-seats.js";
import type { RouteSpec } from "../http/route-spec.js";

/** Seats, agents and routes: CRUD over call-control (calls:read / calls:write). */
export const callResourceRoutes: RouteSpec[] = [
  ...callSeatRoutes,
  ...callAgentRoutes,
  ...callRouteRoutes,
];
