import { characterCount } from "../encoding/segments.js";
import { FieldErrors } from "@switchboard/kit";
import { checkChannels, sortChannels, type Channel } from "../validation.js";
import { parseTemplateBody } from "./variables.js";

export const maxBodyCharacters = 1_600;
const namePattern = /^[^\p{C}]{1,100}$/u;

export interface TemplateInput {
  channels: Channel[];
  body: string;
  variables: string[];
}

/** Checks a version's channels and body; returns them canonical, or throws validation-failed. */
export function checkTemplateContent(
  channelsIn: readonly string[],
  body: string,
  errors: FieldErrors,
): TemplateInput {
  checkChannels(channelsIn, "#/channels", errors);
  let variables: string[] = [];
  if (body.trim() === "") errors.add("#/body", "must not be empty");
  else if (characterCount(body) > maxBodyCharacters) {
    errors.add("#/body", `must be at most ${maxBodyCharacters} characters`);
  } else {
    const parsed = parseTemplateBody(body);
    if ("error" in parsed) errors.add("#/body", parsed.error);
    else variables = parsed.variables;
  }
  errors.throwIfAny();
  return { channels: sortChannels(channelsIn), body, variables };
}

export function checkTemplateName(name: string, errors: FieldErrors): void {
  if (!namePattern.test(name) || name.trim() !== name) {
    errors.add("#/name", "must be 1–100 printable characters without leading or trailing spaces");
  }
}
