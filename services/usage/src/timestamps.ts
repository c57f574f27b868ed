/**
 * RFC 3339 times. Records carry UTC with milliseconds (`2026-11-21T07:17:20.123Z`), the form
 * PostgreSQL's timestamptz and JavaScript's Date both keep exactly, so a stored time reads back
 * as the very string that was signed.
 */
const rfc3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** The UTC millisecond form of an RFC 3339 time, or undefined if `value` is not one. */
export function normalizeTime(value: string): string | undefined {
  if (!rfc3339.test(value)) return undefined;
  const time = new Date(value);
  if (Number.isNaN(time.getTime())) return undefined;
  const year = time.getUTCFullYear();
  if (year < 1970 || year > 9999) return undefined;
  return time.toISOString();
}
