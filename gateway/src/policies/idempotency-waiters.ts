/**
 * Wakes requests of this replica that wait for a key another request holds, as soon as that
 * request finishes, instead of at their next poll. Waiters on other replicas just poll.
 */
export class IdempotencyWaiters {
  private readonly waiting = new Map<string, Set<() => void>>();

  /** Resolves after `ms`, or earlier when `id` is notified. */
  wait(id: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const set = this.waiting.get(id) ?? new Set<() => void>();
      this.waiting.set(id, set);
      const wake = () => {
        clearTimeout(timer);
        set.delete(wake);
        if (set.size === 0 && this.waiting.get(id) === set) this.waiting.delete(id);
        resolve();
      };
      const timer = setTimeout(wake, Math.max(0, ms));
      set.add(wake);
    });
  }

  notify(id: string): void {
    for (const wake of [...(this.waiting.get(id) ?? [])]) wake();
  }

  /** Wakes every waiting request (shutdown). */
  notifyAll(): void {
    for (const id of [...this.waiting.keys()]) this.notify(id);
  }

  /** Requests currently waiting (for tests). */
  get size(): number {
    let total = 0;
    for (const set of this.waiting.values()) total += set.size;
    return total;
  }
}
