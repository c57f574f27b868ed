/** A number as call-control needs it (caller ids, route numbers, DIDs). */
export interface OwnedNumber {
  id: string;
  number: string;
  /** The seat the number is assigned to, if any. */
  seatId: string | undefined;
}

/** Who owns an E.164 number (FindNumberOwner's answer); both unset when nobody does. */
export interface NumberOwner {
  accountId: string | undefined;
  number: OwnedNumber | undefined;
}

/**
 * The numbers' owners as this process last read them, kept only while the inventory tells it of
 * every change (`listening`, then `changed` for each number, at its commit) and has been heard
 * from within `silenceMs`; otherwise every lookup reads, as without a cache. A read that a change
 * or a loss overtook is not kept.
 */
export class NumberOwnerCache {
  private readonly entries = new Map<string, NumberOwner>();
  private heardAt: number | undefined;
  /** Bumped by every change and every loss: a read begun before one is not kept. */
  private epoch = 0;

  constructor(
    private readonly read: (e164: string) => Promise<NumberOwner>,
    private readonly options: { silenceMs: number; maxEntries?: number },
  ) {}

  async lookup(e164: string): Promise<NumberOwner> {
    const trusted = this.trusted();
    const known = trusted ? this.entries.get(e164) : undefined;
    if (known) return known;
    if (!trusted && this.entries.size > 0) this.entries.clear();
    const epoch = this.epoch;
    const owner = await this.read(e164);
    if (this.trusted() && epoch === this.epoch) {
      if (this.entries.size >= (this.options.maxEntries ?? 10_000)) this.entries.clear();
      this.entries.set(e164, owner);
    }
    return owner;
  }

  /** The inventory sent `listening`: every change from now on will be told. */
  listening(): void {
    if (this.heardAt === undefined) this.epoch += 1;
    this.heardAt = Date.now();
  }

  /** The number's owner or seat changed. */
  changed(e164: string): void {
    this.heardAt = Date.now();
    this.epoch += 1;
    this.entries.delete(e164);
  }

  /** The stream of changes ended: nothing is remembered until the next `listening`. */
  lost(): void {
    this.heardAt = undefined;
    this.epoch += 1;
    this.entries.clear();
  }

  private trusted(): boolean {
    return this.heardAt !== undefined && Date.now() - this.heardAt <= this.options.silenceMs;
  }
}
