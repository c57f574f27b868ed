import { requireScope, type Authenticator } from "../auth/index.js";
import type { Stage } from "./pipeline.js";

/** Verified identity on every route but the public ones, and the route's one permission. */
export function authenticationStage(authenticator: Authenticator): Stage {
  return async (exchange, next) => {
    const scope = exchange.route.scope;
    if (scope === null) return next();
    const principal = await authenticator.authenticate(exchange.req.headers.authorization);
    // Known before the scope check, so a 403's usage record names who was refused.
    exchange.principal = principal;
    requireScope(principal, scope);
    return next();
  };
}
