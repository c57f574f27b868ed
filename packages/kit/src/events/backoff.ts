/**
 * Retry delays, computed by one function for both bus implementations so the in-process bus
 * and BullMQ retry on exactly the same schedule. BullMQ calls it through the Worker's custom
 * `backoffStrategy`; the spec rides in the job data.
 */
export type Backoff =
  /** The same delay before every retry. */
  | { type: "fixed"; delayMs: number; jitter?: number }
  /** delayMs, 2×delayMs, 4×delayMs, … capped at maxDelayMs. */
  | { type: "exponential"; delayMs: number; maxDelayMs?: number; jitter?: number }
  /** delaysMs[0] before the 2nd attempt, delaysMs[1] before the 3rd, …; the last one repeats. */
  | { type: "schedule"; delaysMs: readonly number[]; jitter?: number };

/**
 * The delay before the next attempt, after `attemptsMade` (1-based) attempts failed.
 * `jitter` in [0, 1] draws uniformly from [delay × (1 − jitter), delay], as BullMQ does.
 * `minDelayMs` (e.g. a Retry-After) raises the result.
 */
export function backoffDelay(
  backoff: Backoff | undefined,
  attemptsMade: number,
  minDelayMs = 0,
  random: () => number = Math.random,
): number {
  const n = Math.max(1, attemptsMade);
  let delay = 0;
  let jitter = 0;
  if (backoff?.type === "fixed") {
    delay = backoff.delayMs;
    jitter = backoff.jitter ?? 0;
  } else if (backoff?.type === "exponential") {
    delay = Math.min(backoff.delayMs * 2 ** (n - 1), backoff.maxDelayMs ?? Number.MAX_SAFE_INTEGER);
    jitter = backoff.jitter ?? 0;
  } else if (backoff?.type === "schedule") {
    delay = backoff.delaysMs[Math.min(n, backoff.delaysMs.length) - 1] ?? 0;
    jitter = backoff.jitter ?? 0;
  }
  if (jitter > 0) delay = delay * (1 - Math.min(jitter, 1) * random());
  return Math.max(Math.round(delay), Math.round(minDelayMs), 0);
}

const unitMs = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `250ms`, `5s`, `5m`, `2h`, `1d` (or a bare number of milliseconds) → milliseconds. */
export function parseDuration(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!match) throw new Error(`invalid duration ${JSON.stringify(text)}: use e.g. 5s, 5m, 2h`);
  const unit = (match[2] ?? "ms") as keyof typeof unitMs;
  return Math.round(Number(match[1]) * unitMs[unit]);
}

/** `WEBHOOK_RETRY_SCHEDULE`-style lists: `5s,5m,30m,2h` → [5000, 300000, 1800000, 7200000]. */
export function parseRetrySchedule(text: string): number[] {
  const delays = text
    .split(",")
    .filter((part) => part.trim() !== "")
    .map(parseDuration);
  if (delays.length === 0) throw new Error("a retry schedule needs at least one delay");
  return delays;
}

/** A schedule backoff with one attempt per delay plus the first: `{attempts, backoff}`. */
export function retrySchedule(
  delaysMs: readonly number[],
  jitter?: number,
): { attempts: number; backoff: Backoff } {
  return {
    attempts: delaysMs.length + 1,
    backoff: { type: "schedule", delaysMs, ...(jitter ? { jitter } : {}) },
  };
}
