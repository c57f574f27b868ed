import { DomainError } from "@switchboard/kit";

/**
 * At most `limit` secret hashes at once (each scrypt takes a core for tens of milliseconds), so
 * a flood of guesses cannot take the gateway's CPU from other clients. Those that wait queue by
 * source (the caller's address) and the sources take turns: a freed slot goes to the source
 * after the one served last, so one address sending guesses as fast as it can delays another
 * address's token by at most one hash per other waiting source, never by its own backlog. At
 * most `queue` wait in all and `perSource` from one source; past either, 503.
 */
export class HashingGate {
  private running = 0;
  /** Waiting runs by source, in arrival order; the Map's order is the order of turns. */
  private readonly waiting = new Map<string, (() => void)[]>();
  private waitingCount = 0;
  /** The most hashes seen running at once (for tests and metrics). */
  peak = 0;

  constructor(
    private readonly limit: number,
    private readonly queue: number,
    private readonly perSource: number = queue,
  ) {}

  /**
   * Runs `work` when a slot is free and it is `source`'s turn; 503 service-unavailable when the
   * queue, or this source's share of it, is full. `work` is told whether it waited for its slot:
   * what it checked before queueing may be stale by then.
   */
  async run<T>(source: string, work: (waited: boolean) => Promise<T>): Promise<T> {
    let waited = false;
    if (this.running < this.limit) this.running += 1;
    else {
      const line = this.waiting.get(source) ?? [];
      if (this.waitingCount >= this.queue || line.length >= this.perSource) {
        throw new DomainError("service-unavailable", "too many client authentications at once", {
          retryAfter: 1,
        });
      }
      // A finishing hash hands its slot over: `running` stays as it is.
      await new Promise<void>((resolve) => {
        line.push(resolve);
        if (line.length === 1) this.waiting.set(source, line);
        this.waitingCount += 1;
      });
      waited = true;
    }
    this.peak = Math.max(this.peak, this.running);
    try {
      return await work(waited);
    } finally {
      this.handOver();
    }
  }

  /** Gives the slot to the first waiter of the next source in turn, which then goes last. */
  private handOver(): void {
    const turn = this.waiting.entries().next();
    if (turn.done) {
      this.running -= 1;
      return;
    }
    const [source, line] = turn.value;
    const next = line.shift()!;
    this.waiting.delete(source);
    if (line.length > 0) this.waiting.set(source, line);
    this.waitingCount -= 1;
    next();
  }
}
