import { DomainError, type Logger } from "@switchboard/kit";
import type { Exchange, Stage } from "../http/pipeline.js";
import type { Reply } from "../routes/route-spec.js";
import { requestFingerprint } from "./fingerprint.js";
import { parseIdempotencyKey, UNSAFE_METHODS } from "./idempotency-key.js";
import {
  isKeptStatus,
  replayOf,
  storedFromProblem,
  storedFromReply,
} from "./idempotency-replies.js";
import type { IdempotencyStore, StoredResponse } from "./idempotency-store.js";
import { IdempotencyWaiters } from "./idempotency-waiters.js";
import type { PolicyCounters } from "./policy-counters.js";

export interface IdempotencyStageOptions {
  store: IdempotencyStore;
  counters: PolicyCounters;
  logger: Logger;
  errorsUrl: string;
  /** How long a request waits for the original still running before 409 (API.md: 10 s). */
  waitMs: number;
}

export interface IdempotencyLayer {
  stage: Stage;
  /** Resolves once every response being stored (or key being freed) is written. */
  drain(): Promise<void>;
}

declare module "express-serve-static-core" {
  interface Locals {
    /** True when the reply is a replay from the Idempotency-Key store (for the usage record). */
    replayed?: boolean;
  }
}

interface Claim {
  id: string;
  accountId: string;
  key: string;
  leaseId: string;
}

const MAX_POLL_MS = 250;

/**
 * The Idempotency-Key layer (API.md §1): after the rate limit, around the operation, for unsafe
 * methods of authenticated routes. Exactly one request per (account, key) runs the operation;
 * the others replay its kept response, wait for it, or get 409.
 */
export function createIdempotencyLayer(options: IdempotencyStageOptions): IdempotencyLayer {
  const { store, counters, logger } = options;
  const waiters = new IdempotencyWaiters();
  const writing = new Set<Promise<void>>();

  const conflict = (kind: "idempotency-mismatch" | "idempotency-in-progress", detail: string) => {
    counters.idempotencyConflicts += 1;
    return new DomainError(
      kind,
      detail,
      kind === "idempotency-in-progress" ? { retryAfter: 1 } : {},
    );
  };

  const claimOrFail = (accountId: string, key: string, fingerprint: Buffer) =>
    store.claim(accountId, key, fingerprint).catch((error: unknown) => {
      // No claim, no execution: without the store the key's promise cannot be kept.
      const detail = "the idempotency store is unavailable";
      throw new DomainError("service-unavailable", detail, { retryAfter: 1 }, { cause: error });
    });

  /** Claims the key, or settles the request as a replay or a conflict. */
  async function acquire(
    accountId: string,
    key: string,
    fingerprint: Buffer,
  ): Promise<{ claim: Claim } | { replay: StoredResponse }> {
    const id = `${accountId}\u0000${key}`;
    const deadline = Date.now() + options.waitMs;
    for (let poll = 10; ; poll = Math.min(poll * 2, MAX_POLL_MS)) {
      const outcome = await claimOrFail(accountId, key, fingerprint);
      if (outcome.kind === "claimed") {
        if (outcome.takeover) counters.idempotencyLeaseTakeovers += 1;
        return { claim: { id, accountId, key, leaseId: outcome.leaseId } };
      }
      if (outcome.kind === "retry" && Date.now() < deadline) continue;
      if (outcome.kind !== "retry" && !outcome.fingerprint.equals(fingerprint)) {
        throw conflict(
          "idempotency-mismatch",
          "this Idempotency-Key was first used with another method, path or body",
        );
      }
      if (outcome.kind === "completed") return { replay: outcome.response };
      const left = deadline - Date.now();
      if (left <= 0) {
        throw conflict(
          "idempotency-in-progress",
          "the first request with this Idempotency-Key is still running",
        );
      }
      // In progress elsewhere: wait for it (woken early when it finishes on this replica).
      await waiters.wait(id, Math.min(poll, left));
    }
  }

  /**
   * Keeps the response (or frees the key) after the reply has gone out: the client does not
   * wait for this write. A retry arriving meanwhile sees the claim and waits for it.
   */
  function settle(claim: Claim, stored: StoredResponse | null, requestId: string): void {
    const write = (async () => {
      try {
        if (!stored) await store.release(claim.accountId, claim.key, claim.leaseId);
        else if (!(await store.complete(claim.accountId, claim.key, claim.leaseId, stored))) {
          logger.warn(
            { requestId },
            "idempotency claim was taken over before its response was stored",
          );
        }
      } catch (error) {
        // The reply stands: the operation ran. The claim stays until its lease runs out.
        logger.error({ err: error, requestId }, "idempotency store write failed");
      } finally {
        waiters.notify(claim.id);
      }
    })();
    writing.add(write);
    void write.finally(() => writing.delete(write));
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
    try {
      const reply = await next();
      clearInterval(heartbeat);
      settle(claim, isKeptStatus(reply.status) ? storedFromReply(reply) : null, requestId);
      return reply;
    } catch (error) {
      clearInterval(heartbeat);
      const kept = error instanceof DomainError && isKeptStatus(error.status);
      const context = { requestId, errorsUrl: options.errorsUrl };
      settle(claim, kept ? storedFromProblem(error, context) : null, requestId);
      throw error;
    }
  }

  const stage: Stage = async (exchange, next) => {
    const { req, res, principal } = exchange;
    if (principal === null || !UNSAFE_METHODS.has(req.method)) return next();
    const key = parseIdempotencyKey(req.headers["idempotency-key"]);
    if (key === undefined) return next();
    exchange.idempotencyKey = key;
    const fingerprint = requestFingerprint(req.method, req.versionlessPath, req.body);
    const acquired = await acquire(principal.accountId, key, fingerprint);
    if ("replay" in acquired) {
      counters.idempotentReplays += 1;
      res.locals.replayed = true;
      return replayOf(acquired.replay);
    }
    return runClaimed(exchange, next, acquired.claim);
  };

  return {
    stage,
    drain: async () => {
      while (writing.size > 0) await Promise.allSettled([...writing]);
    },
  };
}
