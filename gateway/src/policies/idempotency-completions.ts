import type { Completion, IdempotencyStore } from "./idempotency-store.js";

interface Pending {
  completion: Completion;
  resolve(kept: boolean): void;
  reject(error: unknown): void;
}

/**
 * Completions gathered over `lingerMs` and stored in one statement: one commit for every
 * response kept meanwhile instead of one each. Completions are written after the reply has
 * gone out (IdempotencyWrites), so the wait is off the client's path; a retry arriving
 * meanwhile finds the claim in progress and waits for it, as it would for a single write.
 */
export class IdempotencyCompletions {
  private pending: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: IdempotencyStore,
    private readonly lingerMs: number,
  ) {}

  /** Resolves once the response is stored: false when the claim's lease was lost. */
  complete(completion: Completion): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.pending.push({ completion, resolve, reject });
      this.timer ??= setTimeout(() => void this.flush(), this.lingerMs);
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    this.timer = undefined;
    try {
      const kept = await this.store.completeAll(batch.map((p) => p.completion));
      batch.forEach((p, i) => p.resolve(kept[i] === true));
    } catch (error) {
      for (const p of batch) p.reject(error);
    }
  }
}
