import { DomainError, FieldErrors } from "@switchboard/kit";
import { patternProblem } from "./event-catalog.js";
import {
  checkWebhookUrl,
  maxUrlLength,
  parseUrl,
  UnsafeUrlError,
  type GuardOptions,
} from "./url-guard.js";

/** Field rules shared by creation and update; every failure names its JSON pointer. */
export const maxEventPatterns = 100;
export const maxDescriptionLength = 500;

/** The URL parsed (syntax only), or a field error. */
export function parseTargetUrl(
  raw: string,
  errors: FieldErrors,
  pointer = "#/url",
): URL | undefined {
  if (raw.trim() === "") {
    errors.add(pointer, "is required");
    return undefined;
  }
  const url = parseUrl(raw.trim());
  if (!url) {
    errors.add(
      pointer,
      raw.length > maxUrlLength
        ? `must be at most ${maxUrlLength} characters`
        : "must be an absolute URL such as https://example.com/webhooks",
    );
  }
  return url;
}

/** The patterns, de-duplicated in order; unknown types and prefixes are field errors. */
export function checkEventPatterns(
  patterns: readonly string[],
  errors: FieldErrors,
  pointer = "#/events",
  problemOf: (pattern: string) => string | undefined = patternProblem,
): string[] {
  if (patterns.length === 0) errors.add(pointer, "must name at least one event type or pattern");
  if (patterns.length > maxEventPatterns) {
    errors.add(pointer, `must have at most ${maxEventPatterns} entries`);
  }
  patterns.forEach((pattern, index) => {
    const problem = problemOf(pattern);
    if (problem) errors.add(`${pointer}/${index}`, problem);
  });
  return [...new Set(patterns)];
}

export function checkDescription(description: string | undefined, errors: FieldErrors): void {
  if (description !== undefined && description.length > maxDescriptionLength) {
    errors.add("#/description", `must be at most ${maxDescriptionLength} characters`);
  }
}

/**
 * Runs the SSRF guard on a parsed URL; refusals are 422 unsafe-webhook-url. Returns the href.
 * A host that does not resolve right now is accepted: the guard runs again, and pins the
 * addresses, at every delivery.
 */
export async function guardTargetUrl(
  url: URL,
  guard: GuardOptions,
  pointer = "#/url",
): Promise<string> {
  try {
    await checkWebhookUrl(url, guard);
  } catch (error) {
    if (error instanceof UnsafeUrlError && error.kind === "dns") return url.href;
    if (error instanceof UnsafeUrlError) {
      throw new DomainError("unsafe-webhook-url", error.reason, {
        errors: [{ pointer, detail: error.reason }],
      });
    }
    throw error;
  }
  return url.href;
}
