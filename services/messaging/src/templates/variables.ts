/**
 * Template bodies name variables as `{{name}}` (spaces inside the braces allowed). A name is a
 * letter or underscore followed by letters, digits or underscores, at most 64 characters.
 */
const placeholder = /\{\{\s*([^{}]*?)\s*\}\}/g;
const namePattern = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export type ParsedBody = { variables: string[] } | { error: string };

/** The variable names of a body, in order of first use, or why the body is malformed. */
export function parseTemplateBody(body: string): ParsedBody {
  const variables: string[] = [];
  for (const match of body.matchAll(placeholder)) {
    const name = match[1] ?? "";
    if (!namePattern.test(name)) {
      return {
        error: `{{${name}}} is not a valid variable: use a letter or _ then letters, digits or _`,
      };
    }
    if (!variables.includes(name)) variables.push(name);
  }
  const rest = body.replace(placeholder, "");
  if (rest.includes("{{")) return { error: "has a {{ without its closing }}" };
  return { variables };
}

export type RenderResult =
  { body: string } | { missing: string[]; unknown: string[]; body?: undefined };

/**
 * Replaces every `{{name}}` with its value. Every variable of the template must be supplied and
 * no other: a misspelt name is a mistake worth reporting rather than a silent blank.
 */
export function renderTemplate(
  body: string,
  variables: readonly string[],
  values: Readonly<Record<string, string>>,
): RenderResult {
  const has = (name: string) => Object.prototype.hasOwnProperty.call(values, name);
  const missing = variables.filter((name) => !has(name));
  const unknown = Object.keys(values).filter((name) => !variables.includes(name));
  if (missing.length > 0 || unknown.length > 0) return { missing, unknown };
  return { body: body.replace(placeholder, (_whole, name: string) => values[name] ?? "") };
}
