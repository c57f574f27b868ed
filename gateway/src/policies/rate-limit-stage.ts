import type { ErrorRequestHandler, Request, Response } from "express";
import { DomainError } from "@switchboard/kit";
import type { Stage } from "../http/pipeline.js";
import { clientAddress } from "./client-address.js";
import type { PolicyCounters } from "./policy-counters.js";
import {
  PUBLIC_RESOURCE,
  type RateLimitResource,
  type RateLimitTable,
} from "./rate-limit-config.js";
import { rateLimitHeaders } from "./rate-limit-headers.js";
import type { BucketStore } from "./token-bucket.js";

export interface RateLimiter {
  /**
   * The stage after authentication: an authenticated route counts against the bucket of
   * (account, the route's permission); a public route against the client address's bucket.
   */
  stage: Stage;
  /**
   * Error middleware before the problem mapper: a request that failed before reaching that
   * stage (401/403 from authentication, unknown route, 405, unsupported version, unparsable
   * body) counts against the client address's bucket, so a flood of them is limited too.
   */
  unrouted: ErrorRequestHandler;
}

/** Replies whose request has been counted (each request is counted once). */
const counted = new WeakSet<Response>();

export function createRateLimiter(options: {
  store: BucketStore;
  limits: RateLimitTable;
  counters: PolicyCounters;
}): RateLimiter {
  const { store, limits, counters } = options;

  /** Takes one token, sets the headers, and throws 429 when the bucket is empty. */
  const charge = async (res: Response, resource: RateLimitResource, partition: string) => {
    counted.add(res);
    const limit = limits[resource];
    const decision = await store.take(`rl:${resource}:${partition}`, limit);
    res.set(rateLimitHeaders(resource, limit, decision));
    if (decision.allowed) return;
    counters.rateLimited += 1;
    throw new DomainError(
      "rate-limited",
      `the ${resource} rate limit is exhausted; retry after ${decision.retryAfterSeconds} s`,
      { retryAfter: decision.retryAfterSeconds },
    );
  };

  const chargeAddress = (req: Request, res: Response) =>
    charge(res, PUBLIC_RESOURCE, `addr:${clientAddress(req)}`);

  return {
    stage: async (exchange, next) => {
      const { route, principal, req, res } = exchange;
      if (route.scope === null || principal === null) await chargeAddress(req, res);
      else await charge(res, route.scope, `acct:${principal.accountId}`);
      return next();
    },
    unrouted: (error, req, res, next) => {
      if (counted.has(res) || res.headersSent) {
        next(error);
        return;
      }
      chargeAddress(req, res).then(
        () => next(error),
        (limited: unknown) => next(limited),
      );
    },
  };
}
