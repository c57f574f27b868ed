import { retryAfterSeconds } from "./problems.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export { retryAfterSeconds };

/**
 * Seconds to wait before retry `attempt` (1 = the first retry): what Retry-After asks, else
 * 1, 2, 4 … s; plus jitter of up to a fifth of that (at least 0.25 s), so clients told the same
 * Retry-After do not all come back in the same instant.
 */
export function retryDelaySeconds(
  retryAfter: number | undefined,
  attempt: number,
  random: () => number = Math.random,
): number {
  const base = retryAfter ?? 2 ** (attempt - 1);
  return base + random() * Math.max(0.25, base / 5);
}

export interface RetryOptions {
  /** Tries in all (default 4). */
  attempts?: number;
  /** A reply asking to wait longer than this is returned, not waited for (default 30 s). */
  maxWaitSeconds?: number;
  /** The jitter's source of randomness in [0, 1) (tests). */
  random?: () => number;
}

/**
 * A fetch that retries 429 and 503 as the reply asks (Retry-After, capped, with jitter), up to
 * `attempts` tries in all. A retried write carries the same Idempotency-Key, so it runs at most
 * once.
 */
export function retryingFetch(
  fetcher: (request: Request) => Promise<Response>,
  options: RetryOptions = {},
): (request: Request) => Promise<Response> {
  const attempts = options.attempts ?? 4;
  const maxWait = options.maxWaitSeconds ?? 30;
  return async (request) => {
    for (let attempt = 1; ; attempt += 1) {
      const response = await fetcher(request.clone());
      if ((response.status !== 429 && response.status !== 503) || attempt >= attempts) {
        return response;
      }
      const asked = retryAfterSeconds(response.headers.get("retry-after"));
      if (asked !== undefined && asked > maxWait) return response;
      await response.arrayBuffer();
      await sleep(retryDelaySeconds(asked, attempt, options.random) * 1000);
    }
  };
}
