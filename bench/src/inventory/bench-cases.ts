import { blocks, e164PrefixOf } from "@switchboard/inventory/area-codes";
import { capabilityNames } from "@switchboard/inventory/capabilities";
import { seededRandom, type Random } from "@switchboard/inventory/random";
import { inventory, wire } from "@switchboard/proto";

const { MMS, SMS, VOICE } = inventory.Capability;

/** Varied search requests per filter kind, deterministic from a seed. */
export type SearchFilters = Partial<inventory.SearchNumbersRequest>;

const pick = <T>(random: Random, items: readonly T[]): T => items[random.int(0, items.length - 1)]!;
const digits = (random: Random, n: number) =>
  Array.from({ length: n }, () => String(random.int(0, 9))).join("");
const geographic = blocks.filter((b) => b.type === "local");
const words = [
  "COFFEE",
  "PIZZA",
  "CALL",
  "TAXI",
  "HELP",
  "LOVE",
  "CASH",
  "FOOD",
  "SHOP",
  "RENT",
  "CARS",
  "BEER",
  "DOG",
  "CAT",
  "SUN",
  "JOBS",
  "LAW",
  "TAX",
  "GOLF",
  "BANK",
];
const randomCase = (random: Random, text: string) =>
  [...text].map((c) => (random.next() < 0.5 ? c.toLowerCase() : c.toUpperCase())).join("");

export const benchKinds: Record<string, (random: Random) => SearchFilters> = {
  prefix: (r) => ({ prefix: e164PrefixOf(pick(r, blocks)) + digits(r, r.int(0, 3)) }),
  "pattern anchored": (r) => ({
    pattern: `^${pick(r, geographic).areaCode}${digits(r, r.int(0, 3))}`,
  }),
  "pattern unanchored": (r) => ({ pattern: digits(r, r.int(3, 5)) }),
  "pattern letters/wildcards": (r) =>
    pick(r, [
      () => ({ pattern: pick(r, words) }),
      () => ({ pattern: `${pick(r, words)}$` }),
      () => ({ pattern: `${digits(r, 2)}?${digits(r, 1)}` }),
      () => ({ pattern: `${digits(r, 2)}*${digits(r, 2)}` }),
      () => ({ pattern: `^${pick(r, geographic).areaCode}???${digits(r, 4)}$` }),
      () => ({ pattern: `?${digits(r, 3)}*${pick(r, words)}` }),
    ])(),
  min_repeat: (r) => ({ minRepeat: r.int(2, 8) }),
  "repeat_digit+min_repeat": (r) => ({ repeatDigit: r.int(0, 9), minRepeat: r.int(2, 6) }),
  region: (r) => ({ region: pick(r, geographic).region! }),
  locality: (r) => ({ locality: randomCase(r, pick(r, pick(r, geographic).localities)) }),
  area_code: (r) => ({ areaCode: pick(r, blocks).areaCode }),
  capabilities: (r) => {
    const chosen = capabilityNames.filter(() => r.next() < 0.5);
    const names = chosen.length > 0 ? chosen : [pick(r, capabilityNames)];
    return { capabilities: names.map(wire.capability.of) };
  },
  "country+type": (r) => {
    const [country, type] = pick(r, [
      ["US", "local"],
      ["US", "toll_free"],
      ["CA", "local"],
      ["GB", "local"],
      ["GB", "mobile"],
      ["GB", "toll_free"],
    ] as const);
    return { country: randomCase(r, country), type: wire.numberType.of(type) };
  },
  combined: (r) => {
    const block = pick(r, geographic);
    const location = r.next() < 0.5 ? { region: block.region! } : { areaCode: block.areaCode };
    const extra = pick(r, [
      () => ({ pattern: digits(r, r.int(2, 3)) }),
      () => ({ minRepeat: r.int(2, 4) }),
      () => ({ repeatDigit: r.int(0, 9) }),
      () => ({
        pattern: pick(
          r,
          words.filter((w) => w.length <= 4),
        ),
      }),
    ])();
    return {
      country: block.country,
      type: inventory.NumberType.LOCAL,
      ...location,
      capabilities: r.next() < 0.5 ? [SMS] : [VOICE, SMS, MMS],
      ...extra,
    };
  },
};

/** The first-page request behind each "second page" measurement. */
export const secondPageBase = (random: Random): SearchFilters => {
  const kinds = Object.values(benchKinds);
  return pick(random, kinds)(random);
};

export const benchRandom = (seed: number, kind: string): Random =>
  seededRandom(seed, `bench:${kind}`);
