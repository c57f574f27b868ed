import type { ErrorRequestHandler, Request, RequestHandler, Response } from "express";
import { countRateLimitRejection, DomainError, type BucketStore } from "@switchboard/kit";
import type { Exchange } from "../http/pipeline.js";
import { clientAddress } from "./client-address.js";
import type { PolicyCounters } from "./policy-counters.js";
import {
  PUBLIC_RESOURCE,
  type RateLimitResource,
  type RateLimitTable,
} from "./rate-limit-config.js";
import { rateLimitHeaders } from "./rate-limit-headers.js";

export interface RateLimiter {
  /**
   * The check after authentication (run by the idempotency stage): an authenticated route counts
   * against the bucket of (account, the route's permission), a public route against the client
   * address's bucket. Sets the headers; throws 429 when the bucket is empty.
   */
  admit(exchange: Exchange): Promise<void>;
  /**
   * Error middleware before the problem mapper: a request that failed before reaching the check
   * (401/403 from authentication, unknown route, 405, unsupported version, unparsable
   * body) counts against the client address's bucket, so a flood of them is limited too.
   */
  unrouted: ErrorRequestHandler;
  /** Middleware for pages outside the route table (/docs): the client address's bucket. */
  page: RequestHandler;
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
    countRateLimitRejection(resource);
    throw new DomainError(
      "rate-limited",
      `the ${resource} rate limit is exhausted; retry after ${decision.retryAfterSeconds} s`,
      { retryAfter: decision.retryAfterSeconds },
    );
  };

  const chargeAddress = (req: Request, res: Response) =>
    charge(res, PUBLIC_RESOURCE, `addr:${clientAddress(req)}`);

  const admit = ({ route, principal, req, res }: Exchange) =>
    route.scope === null || principal === null
      ? chargeAddress(req, res)
      : charge(res, route.scope, `acct:${principal.accountId}`);

  return {
    admit,
    page: (req, res, next) => {
      chargeAddress(req, res).then(() => next(), next);
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
