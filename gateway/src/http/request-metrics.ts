import type { NextFunction, Request, RequestHandler, Response } from "express";
import { observeHttpRequest, UNMATCHED_ROUTE } from "@switchboard/kit";
import { API_VERSION } from "./request-context.js";

/**
 * Labels the request with its route template in canonical form (`/v1/api/calls/{call_id}`):
 * mounted on each route of the table (and its 405 handler), so no raw path or id ever becomes
 * a label; a request no route matched is `unmatched`.
 */
export const routeLabel =
  (template: string): RequestHandler =>
  (_req: Request, res: Response, next: NextFunction) => {
    res.locals.metricsRoute = `/${API_VERSION}${template}`;
    next();
  };

/** Client went away before the reply was complete (nginx's convention). */
const CLIENT_CLOSED = 499;

/**
 * Counts every request once its reply has been sent (or the client went away):
 * `http_server_requests_total` and `http_server_request_duration_seconds`. Mount right after
 * the request context (which stamps `startedAt`).
 */
export function requestMetrics(req: Request, res: Response, next: NextFunction): void {
  let observed = false;
  const observe = () => {
    if (observed) return;
    observed = true;
    observeHttpRequest({
      method: req.method,
      route: (res.locals.metricsRoute as string | undefined) ?? UNMATCHED_ROUTE,
      status: res.writableFinished ? res.statusCode : CLIENT_CLOSED,
      seconds: Number(process.hrtime.bigint() - req.startedAt) / 1e9,
    });
  };
  res.once("finish", observe);
  res.once("close", observe);
  next();
}
