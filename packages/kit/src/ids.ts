import { randomFillSync } from "node:crypto";
import { monotonicFactory } from "ulid";

/** Prefixes of docs/api.md; every id is `<prefix>_<ULID>` so ids sort by creation time. */
export const idPrefixes = [
  "num",
  "hld",
  "call",
  "msg",
  "tpl",
  "cns",
  "seat",
  "agt",
  "rte",
  "use",
  "whs",
  "wdl",
  "evt",
  "smk",
  "req",
  "acct",
  "cli",
  "tok",
  "key",
] as const;
export type IdPrefix = (typeof idPrefixes)[number];

/**
 * ulid's default PRNG makes one `getRandomValues` call per character (16 per id), which showed
 * as several per cent of a busy gateway's CPU; this one reads the same CSPRNG 4 KiB at a time.
 * Each character takes the low five bits of one byte: uniform over the 32 symbols.
 */
function pooledRandom(): () => number {
  const pool = Buffer.alloc(4096);
  let next = pool.length;
  return () => {
    if (next === pool.length) {
      randomFillSync(pool);
      next = 0;
    }
    return (pool[next++]! & 31) / 32;
  };
}

const nextUlid = monotonicFactory(pooledRandom());

export const newId = (prefix: IdPrefix): string => `${prefix}_${nextUlid().toLowerCase()}`;

const idPattern = /^([a-z]+)_[0-9a-hjkmnp-tv-z]{26}$/;

export const isId = (value: string, prefix: IdPrefix): boolean => {
  const match = idPattern.exec(value);
  return match !== null && match[1] === prefix;
};
