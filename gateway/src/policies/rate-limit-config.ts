import type { BucketLimit } from "@switchboard/kit";
import { isScope, scopes, type Scope } from "../auth/index.js";

export type { BucketLimit };

/**
 * The bucket that counts requests by client address: public routes, requests that fail
 * authentication, unknown routes, 405 and unsupported versions.
 */
export const PUBLIC_RESOURCE = "public";

export type RateLimitResource = Scope | typeof PUBLIC_RESOURCE;

export type RateLimitTable = Readonly<Record<RateLimitResource, BucketLimit>>;

const read: BucketLimit = { capacity: 100, refillPerSecond: 50 };
const write: BucketLimit = { capacity: 20, refillPerSecond: 10 };

/**
 * Built-in defaults: reads are cheap and bursty, writes reach carriers or money, the smoke
 * check drives every service end to end (one every 10 s after a burst of 5).
 */
export const defaultRateLimits: RateLimitTable = {
  "numbers:read": read,
  "numbers:write": write,
  "calls:read": read,
  "calls:write": write,
  "messages:read": read,
  "messages:write": { capacity: 50, refillPerSecond: 20 },
  "templates:write": { capacity: 20, refillPerSecond: 5 },
  "consents:write": { capacity: 50, refillPerSecond: 20 },
  "usage:read": { capacity: 50, refillPerSecond: 20 },
  "webhooks:read": { capacity: 50, refillPerSecond: 20 },
  "webhooks:write": { capacity: 20, refillPerSecond: 5 },
  "agent:smoke": { capacity: 5, refillPerSecond: 0.1 },
  admin: { capacity: 20, refillPerSecond: 5 },
  [PUBLIC_RESOURCE]: { capacity: 60, refillPerSecond: 20 },
};

const entryPattern = /^([a-z:]+|\*)=([0-9]+)\/([0-9]+(?:\.[0-9]+)?)$/;

/**
 * Parses `RATE_LIMITS` (`calls:write=20/10,numbers:read=100/50`: capacity/refill-per-second)
 * over the defaults. Names are the permissions plus `public`; `*` sets every bucket, and named
 * entries win over it wherever they stand. Throws a message naming the offending entry.
 */
export function parseRateLimits(value: string | undefined): RateLimitTable {
  const table: Record<string, BucketLimit> = { ...defaultRateLimits };
  const entries = (value ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map(parseEntry)
    .sort((a, b) => Number(b.name === "*") - Number(a.name === "*"));
  for (const { name, limit } of entries) {
    if (name !== "*") table[name] = limit;
    else for (const key of Object.keys(table)) table[key] = limit;
  }
  return table as RateLimitTable;
}

function parseEntry(entry: string): { name: string; limit: BucketLimit } {
  const match = entryPattern.exec(entry);
  if (!match) throw new Error(`"${entry}" is not <permission>=<capacity>/<refill-per-second>`);
  const [, name, capacity, refill] = match as unknown as [string, string, string, string];
  if (name !== "*" && !isScope(name) && name !== PUBLIC_RESOURCE) {
    throw new Error(
      `"${name}" is not a permission (${[...scopes, PUBLIC_RESOURCE, "*"].join(", ")})`,
    );
  }
  const limit = { capacity: Number(capacity), refillPerSecond: Number(refill) };
  if (!Number.isSafeInteger(limit.capacity) || limit.capacity < 1 || limit.capacity > 1_000_000) {
    throw new Error(`"${entry}": capacity must be a whole number from 1 to 1000000`);
  }
  if (!(limit.refillPerSecond > 0) || limit.refillPerSecond > 1_000_000) {
    throw new Error(`"${entry}": refill per second must be above 0 and at most 1000000`);
  }
  return { name, limit };
}

/** Seconds for an empty bucket to fill again: the window of the RateLimit-Policy field. */
export const windowSeconds = (limit: BucketLimit): number =>
  Math.max(1, Math.ceil(limit.capacity / limit.refillPerSecond));
