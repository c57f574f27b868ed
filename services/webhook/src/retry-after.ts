/**
 * A `Retry-After` header (RFC 9110 §10.2.3) as milliseconds from `now`: delay-seconds or an
 * HTTP-date. Undefined when absent or unreadable; never negative.
 */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return undefined;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
