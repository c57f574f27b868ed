import { monotonicFactory } from "ulid";

/** Prefixes of API.md; every id is `<prefix>_<ULID>` so ids sort by creation time. */
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

const nextUlid = monotonicFactory();

export const newId = (prefix: IdPrefix): string => `${prefix}_${nextUlid().toLowerCase()}`;

const idPattern = /^([a-z]+)_[0-9a-hjkmnp-tv-z]{26}$/;

export const isId = (value: string, prefix: IdPrefix): boolean => {
  const match = idPattern.exec(value);
  return match !== null && match[1] === prefix;
};
