/**
 * Vanity/number patterns of docs/api.md, matched against the national number: digits; `?` one digit;
 * `*` any run of digits; letters map to keypad digits (COFFEE → 263333); `^` anchors the start,
 * `$` the end; unanchored means "anywhere". A pattern compiles to one SQL LIKE expression (which
 * the pg_trgm GIN index serves) plus, when anchored, the literal digits it must start with (which
 * become E.164 ranges on the ordered index).
 */
export interface NumberPattern {
  /** The LIKE expression over the national number; also the pattern's canonical form. */
  like: string;
  /** Digits every match starts with ("" unless anchored at the start by a literal). */
  literalPrefix: string;
  /** An equivalent regular expression (for checks and tests). */
  regex: RegExp;
}

export type PatternResult = { ok: true; pattern: NumberPattern } | { ok: false; detail: string };

export const maxPatternLength = 32;
/** No national significant number is longer than 15 digits. */
export const maxFixedPositions = 15;

const keypad: Record<string, string> = {};
for (const [digit, letters] of Object.entries({
  "2": "ABC",
  "3": "DEF",
  "4": "GHI",
  "5": "JKL",
  "6": "MNO",
  "7": "PQRS",
  "8": "TUV",
  "9": "WXYZ",
})) {
  for (const letter of letters) keypad[letter] = digit;
}

/** The keypad digit of a letter (case-insensitive), or undefined. */
export const keypadDigit = (letter: string): string | undefined => keypad[letter.toUpperCase()];

export function parsePattern(input: string): PatternResult {
  if (input.length === 0) return { ok: false, detail: "must not be empty" };
  if (input.length > maxPatternLength) {
    return { ok: false, detail: `must be at most ${maxPatternLength} characters` };
  }
  const anchoredStart = input.startsWith("^");
  const anchoredEnd = input.length > (anchoredStart ? 1 : 0) && input.endsWith("$");
  const body = input.slice(anchoredStart ? 1 : 0, anchoredEnd ? -1 : undefined);
  let like = anchoredStart ? "" : "%";
  let fixed = 0;
  for (const [index, char] of [...body].entries()) {
    if (char >= "0" && char <= "9") like += char;
    else if (char === "?") like += "_";
    else if (char === "*") like += "%";
    else if (keypadDigit(char) !== undefined) like += keypadDigit(char);
    else if (char === "^" || char === "$") {
      return {
        ok: false,
        detail: `'${char}' is only allowed at the ${char === "^" ? "start" : "end"}`,
      };
    } else {
      const position = index + (anchoredStart ? 2 : 1);
      return {
        ok: false,
        detail: `invalid character '${char}' at position ${position}: use digits, letters, '?', '*', '^' and '$'`,
      };
    }
    if (char !== "*") fixed += 1;
  }
  if (fixed === 0) return { ok: false, detail: "must contain at least one digit, letter or '?'" };
  if (fixed > maxFixedPositions) {
    return { ok: false, detail: `must match at most ${maxFixedPositions} digits` };
  }
  if (!anchoredEnd) like += "%";
  like = like.replace(/%+/g, "%");
  const literalPrefix = /^[0-9]*/.exec(like)![0];
  const regex = new RegExp(`^${like.replace(/%/g, "[0-9]*").replace(/_/g, "[0-9]")}$`);
  return { ok: true, pattern: { like, literalPrefix, regex } };
}

/** Maximal runs of literal digits in a LIKE expression ("%83%5_4" → ["83", "5", "4"]). */
export const literalRuns = (like: string): string[] => like.match(/[0-9]+/g) ?? [];

const binomial = (n: number, k: number): number => {
  let result = 1;
  for (let i = 1; i <= k; i++) result = (result * (n - k + i)) / i;
  return result;
};

/**
 * Roughly what share of random `length`-digit national numbers a LIKE expression matches:
 * placements of its segments times 10^-(literal digits). A union bound, good enough to tell a
 * pattern that walking the e164 order finds quickly from one that needs an n-gram index.
 */
export function estimateMatchShare(like: string, length = 10): number {
  const segments = like.split("%");
  const anchoredStart = !like.startsWith("%");
  const anchoredEnd = !like.endsWith("%");
  const parts = segments.filter((s) => s !== "");
  const span = parts.reduce((sum, s) => sum + s.length, 0);
  const digits = parts.reduce((sum, s) => sum + s.replace(/_/g, "").length, 0);
  const free = length - span;
  if (free < 0) return 0;
  const floating = Math.max(0, parts.length - (anchoredStart ? 1 : 0) - (anchoredEnd ? 1 : 0));
  const exactLength = anchoredStart && anchoredEnd && parts.length === 1;
  const placements = exactLength ? (free === 0 ? 1 : 0) : binomial(free + floating, floating);
  return Math.min(1, placements * 10 ** -digits);
}
