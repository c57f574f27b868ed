/**
 * Run-length facts of a national number, precomputed at insert so that "a run of at least k
 * identical digits" (optionally of digit d) is an indexable equality/range on plain columns.
 */
export interface DigitRuns {
  /** The longest run of identical consecutive digits (1 for a number without repeats). */
  maxRun: number;
  /** `byDigit[d]`: the longest run of digit d (0 when d does not occur). */
  byDigit: number[];
}

export function digitRuns(national: string): DigitRuns {
  const byDigit = new Array<number>(10).fill(0);
  let maxRun = 0;
  let run = 0;
  for (let i = 0; i < national.length; i++) {
    const code = national.charCodeAt(i) - 48;
    if (code < 0 || code > 9) throw new Error("national numbers contain digits only");
    run = i > 0 && national[i] === national[i - 1] ? run + 1 : 1;
    if (run > byDigit[code]!) byDigit[code] = run;
    if (run > maxRun) maxRun = run;
  }
  return { maxRun, byDigit };
}

/** True when `national` has a run of at least `minRepeat` of `digit` (any digit if omitted). */
export function hasRun(national: string, minRepeat: number, digit?: number): boolean {
  const runs = digitRuns(national);
  return digit === undefined ? runs.maxRun >= minRepeat : runs.byDigit[digit]! >= minRepeat;
}
