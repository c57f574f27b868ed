import {
  blocks,
  callingCodeOf,
  e164PrefixOf,
  type NumberBlock,
  type NumberType,
} from "./area-codes.js";
import { capabilityMask, type Capability } from "./capabilities.js";
import { seededRandom, type Random } from "./random.js";

/** One generated inventory number. National significant numbers have 10 digits. */
export interface GeneratedNumber {
  e164: string;
  callingCode: string;
  national: string;
  country: string;
  region: string | null;
  locality: string | null;
  areaCode: string;
  type: NumberType;
  /** Capability bitmask. */
  capabilities: number;
}

export const nationalLength = 10;

const capabilityMixes: Record<NumberType, readonly (readonly [Capability[], number])[]> = {
  local: [
    [["voice", "sms", "mms"], 62],
    [["voice", "sms"], 18],
    [["voice", "sms", "mms", "rcs"], 14],
    [["voice"], 6],
  ],
  toll_free: [
    [["voice", "sms"], 70],
    [["voice"], 25],
    [["voice", "sms", "mms"], 5],
  ],
  mobile: [
    [["voice", "sms", "mms", "rcs"], 60],
    [["voice", "sms", "mms"], 30],
    [["voice", "sms"], 10],
  ],
};

/**
 * Subscriber-number rules per block: NANP numbers are NPA-NXX-XXXX (exchange 2–9, never N11);
 * London is 020 3/7/8xxx xxxx; other UK geographic numbers start 2–9 after the area code.
 */
function subscriberRule(block: NumberBlock): { first: readonly number[]; length: number } {
  const length = nationalLength - block.areaCode.length;
  if (callingCodeOf(block.country) === "1") return { first: [2, 3, 4, 5, 6, 7, 8, 9], length };
  if (block.type === "local" && block.areaCode === "20") return { first: [3, 7, 8], length };
  if (block.type === "local") return { first: [2, 3, 4, 5, 6, 7, 8, 9], length };
  return { first: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], length };
}

const isNanpN11 = (block: NumberBlock, subscriber: string): boolean =>
  callingCodeOf(block.country) === "1" && subscriber.slice(1, 3) === "11";

/** Distinct subscriber numbers of one block, ascending. */
function subscribers(block: NumberBlock, count: number, random: Random): string[] {
  const { first, length } = subscriberRule(block);
  const restSpace = 10 ** (length - 1);
  if (count > first.length * restSpace * 0.5) {
    throw new RangeError(`too many numbers requested for block ${e164PrefixOf(block)}`);
  }
  const seen = new Set<number>();
  while (seen.size < count) {
    const value =
      first[random.int(0, first.length - 1)]! * restSpace + random.int(0, restSpace - 1);
    if (!seen.has(value) && !isNanpN11(block, String(value))) seen.add(value);
  }
  return [...seen].sort((a, b) => a - b).map((v) => String(v).padStart(length, "0"));
}

/** Splits `count` across blocks by weight (largest remainder), in E.164 order of the blocks. */
export function allocate(count: number): { block: NumberBlock; count: number }[] {
  const ordered = [...blocks].sort((a, b) => (e164PrefixOf(a) < e164PrefixOf(b) ? -1 : 1));
  const total = ordered.reduce((sum, b) => sum + b.weight, 0);
  const shares = ordered.map((block) => {
    const exact = (count * block.weight) / total;
    return { block, count: Math.floor(exact), remainder: exact - Math.floor(exact) };
  });
  let left = count - shares.reduce((sum, s) => sum + s.count, 0);
  for (const share of [...shares].sort((a, b) => b.remainder - a.remainder)) {
    if (left-- <= 0) break;
    share.count += 1;
  }
  return shares.map(({ block, count }) => ({ block, count }));
}

/**
 * A realistic inventory of `count` unique numbers, deterministic from `seed`, yielded in
 * ascending E.164 order (so a bulk load lays the table out in search order).
 */
export function* generateNumbers(options: {
  count: number;
  seed?: number | string;
}): Generator<GeneratedNumber> {
  const seed = options.seed ?? 1;
  for (const { block, count } of allocate(options.count)) {
    if (count === 0) continue;
    const callingCode = callingCodeOf(block.country)!;
    const random = seededRandom(seed, e164PrefixOf(block));
    const localities = block.localities.map((name, i) => [name, i === 0 ? 3 : 1] as const);
    for (const subscriber of subscribers(block, count, random)) {
      const national = block.areaCode + subscriber;
      yield {
        e164: `+${callingCode}${national}`,
        callingCode,
        national,
        country: block.country,
        region: block.region,
        locality: localities.length > 0 ? random.weighted(localities) : null,
        areaCode: block.areaCode,
        type: block.type,
        capabilities: capabilityMask(random.weighted(capabilityMixes[block.type])),
      };
    }
  }
}
