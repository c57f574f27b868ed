import type { IncomingMessage, ServerResponse } from "node:http";
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
} from "@opentelemetry/api";
import { runInSpan, tracer } from "./spans.js";

/**
 * HTTP spans of our own, at the platform's two HTTP edges: the gateway's SERVER span and the
 * webhook delivery's CLIENT span. Like the gRPC spans they exist in every run mode, so the
 * preload does not enable instrumentation-http (no second span for one request). Recorded:
 * method, route template, path (no query string), status. Never recorded: headers
 * (Authorization, cookies), query strings, request or response bodies.
 */
type RoutedRequest = IncomingMessage & { route?: { path?: unknown } };

export interface HttpServerSpanOptions<Req extends IncomingMessage, Res extends ServerResponse> {
  /** The matched route template, read when the reply is done (default: express `req.route`). */
  route?: (req: Req, res: Res) => unknown;
}

const expressRoute = (req: IncomingMessage) => (req as RoutedRequest).route?.path;

/** Connect-style middleware: each request's SERVER span, continued from its `traceparent`. */
export const traceHttpServer =
  <Req extends IncomingMessage, Res extends ServerResponse>(
    options: HttpServerSpanOptions<Req, Res> = {},
  ) =>
  (req: Req, res: Res, next: () => void): void =>
    serveInSpan(req, res, next, options.route ?? expressRoute);

function serveInSpan<Req extends IncomingMessage, Res extends ServerResponse>(
  req: Req,
  res: Res,
  next: () => void,
  routeOf: (req: Req, res: Res) => unknown,
): void {
  const method = req.method ?? "GET";
  const parent = propagation.extract(ROOT_CONTEXT, req.headers);
  const span = tracer().startSpan(
    method,
    {
      kind: SpanKind.SERVER,
      attributes: {
        "http.request.method": method,
        "url.path": (req.url ?? "/").split("?")[0],
        "url.scheme": "http",
      },
    },
    parent,
  );
  const active = trace.setSpan(parent, span);
  // No context.bind of req and res: it patched both emitters on every request, and the mesh
  // floor cost 4–16 % more CPU per request with it (three alternating runs). What goes on from
  // their events is already in the span: body-parser's raw-body binds its callback to the
  // caller's async context (test/e2e/tracing.test.ts checks a POST's gRPC spans descend from
  // it), and the `close` listener below ends the span it closes over.
  res.once("close", () => {
    const route = routeOf(req, res);
    if (typeof route === "string") {
      span.setAttribute("http.route", route);
      span.updateName(`${method} ${route}`);
    }
    span.setAttribute("http.response.status_code", res.statusCode);
    if (res.statusCode >= 500) {
      span.setAttribute("error.type", String(res.statusCode));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  });
  context.with(active, next);
}

export interface HttpClientTarget {
  method: string;
  url: URL;
  /** More span attributes (ids, never secrets). */
  attributes?: Attributes;
}

export interface HttpClientOutcome {
  statusCode?: number | undefined;
  /** A transport failure's class (`timeout`, `connection_refused`…). */
  errorType?: string | undefined;
}

/**
 * Runs one outgoing request in a CLIENT span. Only the scheme, host and port of the URL are
 * recorded: a receiver's path or query may itself be a secret. No trace header is sent.
 */
export function traceHttpClient<T>(
  target: HttpClientTarget,
  send: () => Promise<T>,
  outcome: (result: T) => HttpClientOutcome,
): Promise<T> {
  const { url } = target;
  const span = tracer().startSpan(target.method, {
    kind: SpanKind.CLIENT,
    attributes: {
      "http.request.method": target.method,
      "url.scheme": url.protocol.replace(/:$/, ""),
      "server.address": url.hostname,
      "server.port": Number(url.port || (url.protocol === "https:" ? 443 : 80)),
      ...target.attributes,
    },
  });
  return runInSpan(span, context.active(), send, {
    ok: (result) => {
      const { statusCode, errorType } = outcome(result);
      if (statusCode !== undefined) span.setAttribute("http.response.status_code", statusCode);
      const failed =
        errorType ??
        (statusCode !== undefined && statusCode >= 400 ? String(statusCode) : undefined);
      if (failed !== undefined) {
        span.setAttribute("error.type", failed);
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
    },
  });
}
