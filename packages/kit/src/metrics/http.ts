import { Counter, Histogram } from "prom-client";
import { latencyBuckets, metricsRegistry } from "./registry.js";

const labelNames = ["method", "route", "status"] as const;

export const httpRequestsTotal = new Counter({
  name: "http_server_requests_total",
  help: "HTTP requests answered, by method, route template and status code",
  labelNames,
  registers: [metricsRegistry],
});

export const httpRequestDuration = new Histogram({
  name: "http_server_request_duration_seconds",
  help: "Time from a request's arrival to its reply's last byte, by method, route template and status",
  labelNames,
  buckets: latencyBuckets,
  registers: [metricsRegistry],
});

/** The `route` label of a request no route of the table matched. */
export const UNMATCHED_ROUTE = "unmatched";

const knownMethods = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/**
 * Counts one answered request. `route` must be a route template (`/v1/api/calls/{call_id}`) or
 * UNMATCHED_ROUTE, never a raw path: ids in labels would make a series per resource.
 */
export function observeHttpRequest(request: {
  method: string;
  route: string;
  status: number;
  seconds: number;
}): void {
  const method = request.method.toUpperCase();
  const labels = {
    method: knownMethods.has(method) ? method : "OTHER",
    route: request.route,
    status: String(request.status),
  };
  httpRequestsTotal.inc(labels);
  httpRequestDuration.observe(labels, request.seconds);
}
