import { DomainError } from "@switchboard/kit";

/**
 * At most `limit` secret hashes at once (each scrypt takes a core for tens of milliseconds), so
 * a flood of guesses cannot take the gateway's CPU from other clients; at most `queue` wait.
 */
export class HashingGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** The most hashes seen running at once (for tests and metrics). */
  peak = 0;

  constructor(
    private readonly limit: number,
    private readonly queue: number,
  ) {}

  /**
   * Runs `work` when a slot is free; 503 service-unavailable when the queue is full. `work` is
   * told whether it waited for its slot: what it checked before queueing may be stale by then.
   */
  async run<T>(work: (waited: boolean) => Promise<T>): Promise<T> {
    let waited = false;
    if (this.running < this.limit) this.running += 1;
    else if (this.waiting.length >= this.queue) {
      throw new DomainError("service-unavailable", "too many client authentications at once", {
        retryAfter: 1,
      });
    }
    // A finishing hash hands its slot over: `running` stays as it is.
    else {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
      waited = true;
    }
    this.peak = Math.max(this.peak, this.running);
    try {
      return await work(waited);
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
