import cors from "cors";
import type { RequestHandler } from "express";

/** The request headers a browser app may send (besides the CORS-safelisted ones). */
const allowedHeaders = ["Authorization", "Content-Type", "Idempotency-Key"];

/** The reply headers a browser app may read (besides the CORS-safelisted ones). */
const exposedHeaders = [
  "X-Request-Id",
  "API-Version",
  "Location",
  "Retry-After",
  "Idempotent-Replayed",
  "RateLimit",
  "RateLimit-Policy",
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "WWW-Authenticate",
];

/**
 * CORS for browser apps on the origins the operator lists (CORS_ORIGINS; none: no CORS headers,
 * browsers keep refusing cross-origin calls). Credentials travel as a Bearer token, never as
 * cookies, so no origin is sent `Access-Control-Allow-Credentials`; `*` is allowed for that
 * reason. A preflight is answered 204 before versioning, authentication and the rate limit (it
 * carries no credential), with what the app may send and read, for 10 minutes.
 */
export function corsPolicy(origins: readonly string[]): RequestHandler | undefined {
  if (origins.length === 0) return undefined;
  return cors({
    origin: origins.includes("*") ? "*" : [...origins],
    methods: ["GET", "HEAD", "POST", "PATCH", "DELETE"],
    allowedHeaders,
    exposedHeaders,
    maxAge: 600,
    optionsSuccessStatus: 204,
  });
}
