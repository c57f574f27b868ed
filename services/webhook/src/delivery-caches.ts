import { createTtlCache } from "@switchboard/kit";
import { openKeys } from "./secrets.js";
import type { SecretBox } from "./secret-box.js";
import { systemResolver, type ResolvedAddress, type Resolver } from "./url-guard.js";

/**
 * What a delivery worker may remember between attempts, briefly.
 *
 * DNS: answers are reused for `dnsTtlMs` and concurrent lookups of one host share one query.
 * The guard still checks every address of the answer on every attempt and the sender still
 * connects only to those addresses (pinning); only the resolution is reused. Failures are not
 * cached.
 *
 * Signing keys: opening a sealed secret (AES-GCM) is done once per secret and kept for
 * `keyTtlMs`. The key is the subscription and the sealed envelope itself, and the envelopes
 * in force are still read with every delivery, so a rotation (a new envelope) or an expiry
 * (the envelope is no longer in force) takes effect on the next attempt.
 */
export interface DeliveryCaches {
  resolve: Resolver;
  keys(subscriptionId: string, sealed: readonly string[]): Buffer[];
}

export function createDeliveryCaches(options: {
  box: SecretBox;
  resolve?: Resolver;
  dnsTtlMs?: number;
  keyTtlMs?: number;
}): DeliveryCaches {
  const resolveHost = options.resolve ?? systemResolver;
  const answers = createTtlCache<ResolvedAddress[]>({
    ttlMs: options.dnsTtlMs ?? 2_000,
    maxEntries: 1_000,
  });
  const inFlight = new Map<string, Promise<ResolvedAddress[]>>();
  const opened = createTtlCache<Buffer>({ ttlMs: options.keyTtlMs ?? 60_000, maxEntries: 10_000 });

  const resolve: Resolver = (hostname) => {
    const cached = answers.get(hostname);
    if (cached) return Promise.resolve(cached);
    let pending = inFlight.get(hostname);
    if (!pending) {
      pending = resolveHost(hostname).then(
        (addresses) => {
          inFlight.delete(hostname);
          if (addresses.length > 0) answers.set(hostname, addresses);
          return addresses;
        },
        (error: unknown) => {
          inFlight.delete(hostname);
          throw error;
        },
      );
      inFlight.set(hostname, pending);
    }
    return pending;
  };

  const keys = (subscriptionId: string, sealed: readonly string[]) =>
    sealed.map((envelope) => {
      const cacheKey = `${subscriptionId} ${envelope}`;
      let key = opened.get(cacheKey);
      if (!key) {
        [key] = openKeys(options.box, subscriptionId, [envelope]) as [Buffer];
        opened.set(cacheKey, key);
      }
      return key;
    });

  return { resolve, keys };
}
