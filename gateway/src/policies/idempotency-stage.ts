import { DomainError, type Logger } from "@switchboard/kit";
import type { Exchange, Stage } from "../http/pipeline.js";
import { httpStatusOf } from "../http/problem.js";
import type { Reply } from "../http/route-spec.js";
import { keyedRequest, type Keyed } from "./idempotency-key.js";
import {
  isKeptStatus,
  replayOf,
  storedFromProblem,
  storedFromReply,
} from "./idempotency-replies.js";
import type { ClaimOutcome, IdempotencyStore, StoredResponse } from "./idempotency-store.js";
import { IdempotencyWaiters } from "./idempotency-waiters.js";
import { IdempotencyWrites, type Claim, type KeptAnswer } from "./idempotency-writes.js";
import type { PolicyCounters } from "./policy-counters.js";

export interface IdempotencyStageOptions {
  store: IdempotencyStore;
  counters: PolicyCounters;
  logger: Logger;
  errorsUrl: string;
  /** How long a request waits for the original still running before 409 (docs/api.md: 10 s). */
  waitMs: number;
  /**
   * The rate limit, which runs in this stage: its bucket check and the key's first claim go out
   * together instead of one after the other. It still decides first: a refused request answers
   * 429 whatever its key (malformed, replayable, in conflict, store down), and a claim the first
   * attempt made is released before the 429 is sent. The first attempt never takes over a dead row.
   */
  admit: (exchange: Exchange) => Promise<void>;
}

export interface IdempotencyLayer {
  stage: Stage;
  /** Resolves once every response being stored (or key being freed) is written. */
  drain(): Promise<void>;
  /** Stops retrying answers the database did not take, then drains. */
  close(): Promise<void>;
  /**
   * Shutting down: a request waiting for a key held elsewhere stops waiting and answers 503
   * (its client retries on another replica), so the drain does not wait out IDEMPOTENCY_WAIT_MS.
   */
  stopWaiting(): void;
}

declare module "express-serve-static-core" {
  interface Locals {
    /** True when the reply is a replay from the Idempotency-Key store (for the usage record). */
    replayed?: boolean;
    /** The answer the reply's key keeps: committed with its record before the reply is sent. */
    keptAnswer?: KeptAnswer;
  }
}

const MAX_POLL_MS = 250;

/**
 * The rate limit and the Idempotency-Key layer (docs/api.md §1) as one stage after authentication:
 * the rate limit first, then, for unsafe methods of authenticated routes, the key around the
 * operation. Exactly one request per (account, key) runs the operation; the others replay its
 * kept response, wait for it, or get 409.
 */
export function createIdempotencyLayer(options: IdempotencyStageOptions): IdempotencyLayer {
  const { store, counters, logger } = options;
  const waiters = new IdempotencyWaiters();
  const writes = new IdempotencyWrites(store, waiters, logger);
  let stopping = false;

  const conflict = (
    kind: "idempotency-mismatch" | "idempotency-in-progress",
    detail: string,
    retryAfter?: number,
  ) => {
    counters.idempotencyConflicts += 1;
    return new DomainError(kind, detail, retryAfter === undefined ? {} : { retryAfter });
  };

  const claimOrFail = (request: Keyed, takeOver: boolean) =>
    store
      .claim(request.accountId, request.key, request.fingerprint, { takeOver })
      .catch((error: unknown) => {
        // No claim, no execution: without the store the key's promise cannot be kept.
        const detail = "the idempotency store is unavailable";
        throw new DomainError("service-unavailable", detail, { retryAfter: 1 }, { cause: error });
      });

  const claimOf = (request: Keyed, leaseId: string): Claim => ({
    id: request.id,
    accountId: request.accountId,
    key: request.key,
    leaseId,
  });

  /**
   * Claims the key, or settles the request as a replay or a conflict. `first` is the outcome of
   * an attempt already made (alongside the rate limit).
   */
  async function acquire(
    request: Keyed,
    first: ClaimOutcome | undefined,
  ): Promise<{ claim: Claim } | { replay: StoredResponse }> {
    const deadline = Date.now() + options.waitMs;
    let made = first;
    for (let poll = 10; ; poll = Math.min(poll * 2, MAX_POLL_MS)) {
      if (stopping) {
        throw new DomainError("service-unavailable", "this gateway is shutting down; retry", {
          retryAfter: 1,
        });
      }
      const outcome = made ?? (await claimOrFail(request, true));
      made = undefined;
      if (outcome.kind === "claimed") {
        if (outcome.takeover) counters.idempotencyLeaseTakeovers += 1;
        return { claim: claimOf(request, outcome.leaseId) };
      }
      if (outcome.kind === "retry" && Date.now() < deadline) continue;
      if (outcome.kind !== "retry" && !outcome.fingerprint.equals(request.fingerprint)) {
        throw conflict(
          "idempotency-mismatch",
          "this Idempotency-Key was first used with another method, path, body or credential",
        );
      }
      if (outcome.kind === "completed") return { replay: outcome.response };
      const left = deadline - Date.now();
      if (left <= 0) {
        // Retry-After: when the key frees even if its holder died (its lease runs out).
        const leaseLeft =
          outcome.kind === "in-progress" ? Math.max(1, Math.ceil(outcome.leaseLeftSeconds)) : 1;
        throw conflict(
          "idempotency-in-progress",
          `the first request with this Idempotency-Key is still running; if it was lost, the key frees within ${leaseLeft} s`,
          leaseLeft,
        );
      }
      // In progress elsewhere: wait for it (woken early when it finishes on this replica).
      await waiters.wait(request.id, Math.min(poll, left));
    }
  }

  /**
   * Runs the rate limit alongside the first claim of the request's key, if any; once admitted,
   * answers that claim's outcome.
   */
  async function admitted(
    exchange: Exchange,
    request: Keyed | undefined,
  ): Promise<ClaimOutcome | undefined> {
    const first = request && claimOrFail(request, false);
    if (first) {
      // Read below, or by the release: not an unhandled rejection meanwhile.
      first.catch(() => undefined);
      // The claim is the longer round trip: its statement goes out first (the pool sends it on
      // the next tick), the bucket script right after.
      await new Promise(process.nextTick);
    }
    try {
      await options.admit(exchange);
    } catch (refusal) {
      const outcome = await first?.catch(() => undefined);
      if (request && outcome?.kind === "claimed") {
        await writes.releaseNow(claimOf(request, outcome.leaseId), exchange.req.requestId);
      }
      throw refusal;
    }
    return await first;
  }

  /** Runs the operation under the claim, renewing its lease while it runs. */
  async function runClaimed(exchange: Exchange, next: () => Promise<Reply>, claim: Claim) {
    const { requestId } = exchange.req;
    const heartbeat = setInterval(
      () => {
        store.renew(claim.accountId, claim.key, claim.leaseId).catch((error: unknown) => {
          logger.warn({ err: error, requestId }, "idempotency lease renewal failed");
        });
      },
      (store.options.leaseSeconds * 1000) / 3,
    );
    heartbeat.unref();
    // A kept answer is committed with the reply's record before the reply goes out (the
    // reply commit middleware); an answer not kept frees the key after it.
    const { res } = exchange;
    try {
      const reply = await next();
      clearInterval(heartbeat);
      if (isKeptStatus(reply.status)) {
        res.locals.keptAnswer = writes.keep(claim, storedFromReply(reply), requestId);
      } else writes.release(claim, requestId);
      return reply;
    } catch (error) {
      clearInterval(heartbeat);
      if (error instanceof DomainError && isKeptStatus(httpStatusOf(error.kind))) {
        const context = { requestId, errorsUrl: options.errorsUrl };
        res.locals.keptAnswer = writes.keep(claim, storedFromProblem(error, context), requestId);
      } else writes.release(claim, requestId);
      throw error;
    }
  }

  const stage: Stage = async (exchange, next) => {
    let request: Keyed | undefined;
    let malformed: unknown;
    try {
      request = keyedRequest(exchange);
    } catch (error) {
      malformed = error;
    }
    const first = await admitted(exchange, request);
    if (malformed !== undefined) throw malformed;
    if (!request) return next();
    exchange.idempotencyKey = request.key;
    const acquired = await acquire(request, first);
    if ("replay" in acquired) {
      counters.idempotentReplays += 1;
      exchange.res.locals.replayed = true;
      return replayOf(acquired.replay);
    }
    return runClaimed(exchange, next, acquired.claim);
  };

  return {
    stage,
    drain: () => writes.drain(),
    close: () => writes.close(),
    stopWaiting: () => {
      stopping = true;
      waiters.notifyAll();
    },
  };
}
