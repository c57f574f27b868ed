import { setImmediate as afterThisTurn, setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "@switchboard/kit";
import type { Completion, IdempotencyStore, StoredResponse } from "./idempotency-store.js";
import type { IdempotencyWaiters } from "./idempotency-waiters.js";

/** A key this replica holds: the request owning it runs (or ran) the operation. */
export interface Claim {
  /** `accountId \0 key`: what waiters of this replica wait on. */
  id: string;
  accountId: string;
  key: string;
  leaseId: string;
}

/**
 * The answer a keyed request keeps, handed to the reply committer, which stores it with the
 * reply's record before the reply is sent (so an answered request's retry always finds it).
 */
export interface KeptAnswer {
  completion: Completion;
  /** Committed: `kept` false when the claim was taken over meanwhile. */
  committed(kept: boolean): void;
  /**
   * Not committed (the database was down past the commit budget): the reply becomes 503 and
   * the answer is stored as soon as the database takes it, so a retry gets it, not a rerun.
   */
  failed(error: unknown): void;
}

/** Pause between tries of an answer the database did not take: doubling up to 5 s. */
const RETRY_MAX_MS = 5_000;

/**
 * The writes that end a claim: keeping the response or freeing the key. Waiters on this replica
 * are woken once the row says so; `drain()` waits for the writes still going.
 */
export class IdempotencyWrites {
  private readonly writing = new Set<Promise<void>>();
  private closing = false;

  constructor(
    private readonly store: IdempotencyStore,
    private readonly waiters: IdempotencyWaiters,
    private readonly logger: Logger,
  ) {}

  /** The claim's answer to keep, for the reply committer (built only now, once). */
  keep(claim: Claim, response: StoredResponse, requestId: string): KeptAnswer {
    const completion: Completion = {
      accountId: claim.accountId,
      key: claim.key,
      leaseId: claim.leaseId,
      response,
    };
    return {
      completion,
      committed: (kept) => {
        if (!kept) {
          this.logger.warn(
            { requestId },
            "idempotency claim was taken over before its response was stored",
          );
        }
        this.waiters.notify(claim.id);
      },
      failed: (error) => {
        this.logger.error(
          { err: error, requestId },
          "idempotency answer not stored before the reply; retrying until it is",
        );
        this.track(this.storeEventually(claim, completion, requestId));
      },
    };
  }

  /**
   * Frees the key after the reply has gone out (the response is not kept): the reply is sent in
   * this turn of the event loop and the write starts in the next. A retry arriving meanwhile
   * sees the claim and waits for it.
   */
  release(claim: Claim, requestId: string): void {
    this.track(
      (async () => {
        await afterThisTurn();
        // A database that is down frees it once it is back, not when the lease runs out
        // (a retry waiting for the key is woken then).
        for (let pause = 100; !(await this.releaseNow(claim, requestId)) && !this.closing;) {
          await sleep(pause);
          pause = Math.min(pause * 2, RETRY_MAX_MS);
        }
      })(),
    );
  }

  /**
   * Frees a claim now: for a request refused before it ran (the rate limit), done before the
   * refusal is sent, so the key is free when the client retries.
   */
  async releaseNow(claim: Claim, requestId: string): Promise<boolean> {
    try {
      await this.store.release(claim.accountId, claim.key, claim.leaseId);
      return true;
    } catch (error) {
      // Nothing kept: a retry takes the claim over once its lease runs out, at the latest.
      this.logger.warn({ err: error, requestId }, "idempotency claim not freed yet");
      return false;
    } finally {
      this.waiters.notify(claim.id);
    }
  }

  /** Resolves once every write started so far is done. */
  async drain(): Promise<void> {
    while (this.writing.size > 0) await Promise.allSettled([...this.writing]);
  }

  /** Answers still being retried stop after their current try; then drains. */
  async close(): Promise<void> {
    this.closing = true;
    await this.drain();
  }

  private track(write: Promise<void>): void {
    this.writing.add(write);
    void write.finally(() => this.writing.delete(write));
  }

  private async storeEventually(claim: Claim, completion: Completion, requestId: string) {
    for (let pause = 100; !this.closing; pause = Math.min(pause * 2, RETRY_MAX_MS)) {
      await sleep(pause);
      try {
        const [kept] = await this.store.completeAll([completion]);
        if (!kept) this.logger.warn({ requestId }, "idempotency claim was taken over");
        break;
      } catch (error) {
        this.logger.warn({ err: error, requestId }, "idempotency answer still not stored");
      }
    }
    this.waiters.notify(claim.id);
  }
}
