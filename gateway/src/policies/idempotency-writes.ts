import { setImmediate as afterThisTurn } from "node:timers/promises";
import type { Logger } from "@switchboard/kit";
import { IdempotencyCompletions } from "./idempotency-completions.js";
import type { IdempotencyStore, StoredResponse } from "./idempotency-store.js";
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
 * The writes that end a claim: keeping the response or freeing the key. Waiters on this replica
 * are woken once the row says so; `drain()` waits for the writes still going.
 */
export class IdempotencyWrites {
  private readonly writing = new Set<Promise<void>>();
  private readonly completions: IdempotencyCompletions;

  constructor(
    private readonly store: IdempotencyStore,
    private readonly waiters: IdempotencyWaiters,
    private readonly logger: Logger,
    /** How long a kept response waits for others to be stored with it (one commit). */
    completionLingerMs = 10,
  ) {
    this.completions = new IdempotencyCompletions(store, completionLingerMs);
  }

  /**
   * Keeps the response (`kept`, built only then) or frees the key, after the reply has gone out:
   * the reply is sent in this turn of the event loop and the write starts in the next (a kept
   * response joins the completions of the next `completionLingerMs`), so neither the sealing
   * nor the statement is on the client's path. A retry arriving meanwhile sees the claim and
   * waits for it.
   */
  settle(claim: Claim, kept: (() => StoredResponse) | null, requestId: string): void {
    const write = (async () => {
      await afterThisTurn();
      try {
        if (!kept) await this.store.release(claim.accountId, claim.key, claim.leaseId);
        else if (
          !(await this.completions.complete({
            accountId: claim.accountId,
            key: claim.key,
            leaseId: claim.leaseId,
            response: kept(),
          }))
        ) {
          this.logger.warn(
            { requestId },
            "idempotency claim was taken over before its response was stored",
          );
        }
      } catch (error) {
        // The reply stands: the operation ran. The claim stays until its lease runs out.
        this.logger.error({ err: error, requestId }, "idempotency store write failed");
      } finally {
        this.waiters.notify(claim.id);
      }
    })();
    this.writing.add(write);
    void write.finally(() => this.writing.delete(write));
  }

  /**
   * Frees a claim whose request was refused before it ran (the rate limit): done before the
   * refusal is sent, so the key is free when the client retries.
   */
  async release(claim: Claim, requestId: string): Promise<void> {
    try {
      await this.store.release(claim.accountId, claim.key, claim.leaseId);
    } catch (error) {
      // Nothing ran: a retry takes the claim over once its lease runs out.
      this.logger.warn({ err: error, requestId }, "idempotency claim of a refused request kept");
    } finally {
      this.waiters.notify(claim.id);
    }
  }

  /** Resolves once every write started so far is done. */
  async drain(): Promise<void> {
    while (this.writing.size > 0) await Promise.allSettled([...this.writing]);
  }
}
