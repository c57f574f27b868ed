import type pg from "pg";
import type { Logger } from "pino";
import { listenToChannel } from "./listen-channel.js";

export interface NotifiedCacheOptions<V> {
  /** The most entries kept; the oldest goes first (default 10,000). */
  maxEntries?: number;
  /**
   * Entries are trusted only while the source was heard from this recently (a source with a
   * heartbeat); without it they are trusted from `listening` until `lost`.
   */
  silenceMs?: number;
  /** Whether a read's answer may be kept (default: every answer). */
  keep?: (value: V) => boolean;
  /** Other names a change may give a kept value by, besides its key (a number's E.164). */
  namesOf?: (value: V) => string[];
}

/**
 * Answers remembered only while their source tells of every change: from `listening` (the
 * source will tell of each change from now on) to `lost`, and, with `silenceMs`, only while it
 * was heard from that recently. Otherwise every `get` reads, as without a cache. `changed`
 * forgets what a change names (every entry when it names nothing), and a read that a change or
 * a loss overtook is used but not kept.
 */
export class NotifiedCache<V> {
  private readonly entries = new Map<string, V>();
  private heard = false;
  private heardAt = 0;
  /** Bumped by every change and every loss: a read begun before one is not kept. */
  private epoch = 0;

  constructor(private readonly options: NotifiedCacheOptions<V> = {}) {}

  /** The answer kept for `key`, or `read`'s (kept if nothing overtook it). */
  async get(key: string, read: () => Promise<V>): Promise<V> {
    const trusted = this.trusted();
    if (trusted && this.entries.has(key)) return this.entries.get(key) as V;
    if (!trusted && this.entries.size > 0) this.entries.clear();
    const epoch = this.epoch;
    const value = await read();
    if (this.trusted() && epoch === this.epoch && (this.options.keep?.(value) ?? true)) {
      if (this.entries.size >= (this.options.maxEntries ?? 10_000))
        this.entries.delete(this.entries.keys().next().value as string);
      this.entries.set(key, value);
    }
    return value;
  }

  /** The source tells of every change from now on (and, with `silenceMs`, is alive). */
  listening(): void {
    if (!this.heard) this.forgetAll();
    this.heard = true;
    this.heardAt = Date.now();
  }

  /** Something changed: `name` (a key, or a name `namesOf` gives) or, without one, anything. */
  changed(name?: string): void {
    this.heardAt = Date.now();
    if (name === undefined) return this.forgetAll();
    this.epoch += 1;
    this.entries.delete(name);
    const namesOf = this.options.namesOf;
    if (!namesOf) return;
    for (const [key, value] of this.entries)
      if (namesOf(value).includes(name)) this.entries.delete(key);
  }

  /** The source stopped telling: nothing is kept until the next `listening`. */
  lost(): void {
    this.heard = false;
    this.forgetAll();
  }

  /**
   * Feeds the cache from a PostgreSQL LISTEN on `channel` (a connection of its own from
   * `pool`) whose notifications name what changed (an empty payload: anything). PGlite delivers
   * no notifications, so there nothing is kept.
   */
  listenTo(pool: pg.Pool, channel: string, logger?: Logger): { stop(): Promise<void> } {
    const listener = listenToChannel(
      pool,
      channel,
      {
        notify: (payload) => this.changed(payload || undefined),
        listening: () => this.listening(),
        lost: () => this.lost(),
      },
      logger,
    );
    return {
      stop: async () => {
        this.lost();
        await listener.stop();
      },
    };
  }

  private forgetAll(): void {
    this.epoch += 1;
    this.entries.clear();
  }

  private trusted(): boolean {
    if (!this.heard) return false;
    const silenceMs = this.options.silenceMs;
    return silenceMs === undefined || Date.now() - this.heardAt <= silenceMs;
  }
}
