import { DomainError, validationFailed, type FieldError } from "@switchboard/kit";

/** Nesting deeper than this in a body is refused (400) before anything walks it again. */
export const MAX_BODY_DEPTH = 64;

// A UTF-16 surrogate without its other half cannot be stored as text, nor can a NUL.
const loneSurrogate = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why a string cannot be taken as text, or undefined when it can. */
export function textProblem(value: string): string | undefined {
  if (value.includes("\u0000")) return "must not contain a NUL character (U+0000)";
  if (loneSurrogate.test(value)) return "must not contain an unpaired UTF-16 surrogate";
  return undefined;
}

const escapePointer = (segment: string): string => segment.replace(/~/g, "~0").replace(/\//g, "~1");

/**
 * Walks a parsed body: nesting deeper than MAX_BODY_DEPTH is 400 malformed-request; a string,
 * or a member name, holding a NUL or a lone surrogate is a field error at its JSON Pointer.
 */
export function checkBodyText(body: unknown): void {
  const errors: FieldError[] = [];
  const walk = (value: unknown, pointer: string, depth: number): void => {
    if (depth > MAX_BODY_DEPTH) {
      throw new DomainError(
        "malformed-request",
        `the request body nests deeper than ${MAX_BODY_DEPTH} levels`,
      );
    }
    if (typeof value === "string") {
      const problem = textProblem(value);
      if (problem) errors.push({ pointer: pointer || "#", detail: problem });
      return;
    }
    if (Array.isArray(value)) {
      value.forEach((item, index) => walk(item, `${pointer || "#"}/${index}`, depth + 1));
      return;
    }
    if (value !== null && typeof value === "object") {
      for (const [key, item] of Object.entries(value)) {
        const at = `${pointer || "#"}/${escapePointer(key)}`;
        const problem = textProblem(key);
        if (problem) errors.push({ pointer: at, detail: `the member name ${problem}` });
        walk(item, at, depth + 1);
      }
    }
  };
  walk(body, "", 0);
  if (errors.length > 0) throw validationFailed(errors);
}

/** Query parameters holding a NUL or a lone surrogate: field errors at `#/query/<name>`. */
export function checkQueryText(query: Record<string, unknown>): void {
  const errors: FieldError[] = [];
  for (const [name, value] of Object.entries(query)) {
    const values = Array.isArray(value) ? value : [value];
    const problem =
      textProblem(name) ??
      values.map((v) => (typeof v === "string" ? textProblem(v) : undefined)).find(Boolean);
    if (problem) errors.push({ pointer: `#/query/${escapePointer(name)}`, detail: problem });
  }
  if (errors.length > 0) throw validationFailed(errors);
}

/** Whether every path parameter is text (a NUL or lone surrogate names no resource). */
export const pathParamsAreText = (params: Record<string, unknown>): boolean =>
  Object.values(params).every((v) => typeof v !== "string" || textProblem(v) === undefined);
