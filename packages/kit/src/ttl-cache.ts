/**
 * A small in-process cache whose entries live `ttlMs` (e.g. webhook workers' DNS answers and
 * opened keys, messaging's sender numbers). Bounded: past `maxEntries` the oldest entry goes.
 * Values are never logged or exposed beyond `get`.
 */
export interface TtlCache<V> {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
}

export function createTtlCache<V>(options: {
  ttlMs: number;
  maxEntries: number;
  now?: () => number;
}): TtlCache<V> {
  const now = options.now ?? Date.now;
  const entries = new Map<string, { value: V; expiresAt: number }>();
  return {
    get(key) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.expiresAt > now()) return entry.value;
      entries.delete(key);
      return undefined;
    },
    set(key, value) {
      entries.delete(key);
      if (entries.size >= options.maxEntries) {
        entries.delete(entries.keys().next().value as string);
      }
      entries.set(key, { value, expiresAt: now() + options.ttlMs });
    },
  };
}
