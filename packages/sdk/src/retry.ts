const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Seconds a Retry-After header asks for (delta-seconds or an HTTP date). */
export function retryAfterSeconds(value: string | null): number | undefined {
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

/**
 * A fetch that retries 429 and 503 as the reply asks (Retry-After, capped), up to `attempts`
 * tries in all. A retried write carries the same Idempotency-Key, so it runs at most once.
 */
export function retryingFetch(
  fetcher: (request: Request) => Promise<Response>,
  options: { attempts?: number; maxWaitSeconds?: number } = {},
): (request: Request) => Promise<Response> {
  const attempts = options.attempts ?? 4;
  const maxWait = options.maxWaitSeconds ?? 30;
  return async (request) => {
    for (let attempt = 1; ; attempt += 1) {
      const response = await fetcher(request.clone());
      if ((response.status !== 429 && response.status !== 503) || attempt >= attempts) {
        return response;
      }
      const wait = retryAfterSeconds(response.headers.get("retry-after")) ?? 2 ** (attempt - 1);
      if (wait > maxWait) return response;
      await response.arrayBuffer();
      await sleep(wait * 1000);
    }
  };
}
