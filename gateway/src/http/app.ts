import express, { type NextFunction, type Request, type Response } from "express";
import { DomainError, traceHttpServer, type Logger } from "@switchboard/kit";
import { withoutBackends, type RequestRpc } from "../backend-rpc.js";
import type { RouteSpec } from "./route-spec.js";
import { bodyParser } from "./body-parsing.js";
import { runStages, sendReply, type Stage } from "./pipeline.js";
import { sendProblem } from "./problem.js";
import { requestContext } from "./request-context.js";
import { requestMetrics, routeLabel } from "./request-metrics.js";
import { versioning } from "./versioning.js";

export interface AppOptions {
  routes: RouteSpec[];
  /** Policies around every operation, outermost first. */
  stages: Stage[];
  /** Each request's backend calls, handed to its handler (none: every call fails). */
  rpc?: RequestRpc;
  /**
   * Express middleware that runs first for every request, right after the request id is minted
   * and before versioning can fail it (e.g. the usage record hook, which sees every reply).
   */
  first?: express.RequestHandler[];
  /** CORS (answers preflights): after `first`, before versioning; none: no CORS headers. */
  cors?: express.RequestHandler | undefined;
  /** Express middleware that runs for every request before routing (e.g. rate-limit headers). */
  before?: express.RequestHandler[];
  /** Pages outside the API's route table (the /docs reference), after `before`. */
  pages?: express.Router[];
  /**
   * Error middleware that runs before the problem mapper for every failure, including those
   * that never reached a route's stages (404, 405, unsupported version, body parsing): e.g. the
   * rate limit of requests that were not counted yet.
   */
  errorHandlers?: express.ErrorRequestHandler[];
  /** Express `trust proxy`: which proxies' X-Forwarded-For to believe for `req.ip`. */
  trustProxy?: boolean | number | string;
  errorsUrl: string;
  logger: Logger;
}

const expressPath = (template: string): string => template.replace(/\{([a-z_]+)\}/g, ":$1");
const routeTemplate = (path: string): string => path.replace(/:([a-z_]+)/g, "{$1}");

/** Builds the express app from the route table. */
export function createHttpApp(options: AppOptions): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("query parser", "simple");
  app.set("trust proxy", options.trustProxy ?? false);
  // The request's server span first, so it covers every later step (see kit telemetry).
  app.use(traceHttpServer<Request, Response>({ route: (_req, res) => res.locals.metricsRoute }));
  app.use(requestContext);
  app.use(requestMetrics);
  for (const middleware of options.first ?? []) app.use(middleware);
  if (options.cors) app.use(options.cors);
  app.use(versioning);
  for (const middleware of options.before ?? []) app.use(middleware);
  for (const pages of options.pages ?? []) app.use(pages);

  const rpc = options.rpc ?? withoutBackends;
  const methodsByPath = new Map<string, Set<string>>();
  for (const route of options.routes) {
    const path = expressPath(route.path);
    methodsByPath.set(path, (methodsByPath.get(path) ?? new Set()).add(route.method.toUpperCase()));
    app[route.method](
      path,
      routeLabel(route.path),
      bodyParser(route),
      (req: Request, res: Response, next: NextFunction) => {
        const exchange = { route, req, res, principal: null, idempotencyKey: undefined };
        runStages(options.stages, exchange, rpc).then((reply) => sendReply(res, reply), next);
      },
    );
  }
  for (const [path, methods] of methodsByPath) {
    if (methods.has("GET")) methods.add("HEAD");
    const allow = [...methods].sort().join(", ");
    const label = routeLabel(routeTemplate(path));
    app.all(path, label, (req: Request, _res: Response, next: NextFunction) =>
      next(
        new DomainError(
          "method-not-allowed",
          `${req.method} is not allowed here; allowed: ${allow}`,
          {
            headers: { Allow: allow },
          },
        ),
      ),
    );
  }
  app.use((req: Request, _res: Response, next: NextFunction) =>
    next(new DomainError("not-found", `no resource at ${req.versionlessPath ?? req.path}`)),
  );
  // A path that is not valid percent-encoded UTF-8 (express cannot decode its parameters).
  app.use((error: unknown, _req: Request, _res: Response, next: NextFunction) =>
    next(
      error instanceof URIError
        ? new DomainError("malformed-request", "the request path is not valid percent-encoding")
        : error,
    ),
  );
  for (const handler of options.errorHandlers ?? []) app.use(handler);
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (!(error instanceof DomainError) || error.kind === "internal") {
      options.logger.error({ err: error, requestId: req.requestId }, "request failed");
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    sendProblem(res, error, { requestId: req.requestId, errorsUrl: options.errorsUrl });
  });
  return app;
}
