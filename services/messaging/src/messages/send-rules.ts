import { DomainError, FieldErrors } from "@switchboard/kit";
import { characterCount } from "../encoding/segments.js";
import type { SenderNumber } from "../sender-numbers.js";
import { maxBodyCharacters } from "../templates/template-input.js";
import { renderTemplate } from "../templates/variables.js";
import { channelsOf, type SendRequest } from "./send-checks.js";
import type { SendFacts, SendTemplate } from "./send-facts.js";

/** The checks of a send that need what was looked up: sender, template, body, recipient. */
/** `from` must be the account's number with the capability of every channel the send may use. */
export function checkSender(
  request: SendRequest,
  sender: SenderNumber | undefined,
  errors: FieldErrors,
) {
  if (!sender) {
    errors.add("#/from", `${request.from} is not a number of this account`);
    return;
  }
  for (const channel of channelsOf(request)) {
    if (!sender.capabilities.includes(channel)) {
      errors.add(
        channel === request.channel ? "#/from" : "#/fallback",
        `${sender.number} has no ${channel} capability (it has ${sender.capabilities.join(", ") || "none"})`,
      );
    }
  }
}

/**
 * The carrier must be able to send on the channel, or on the fallback the request allows (the
 * message then goes on the fallback): `smpp` carries SMS only (docs/api.md "Carriers").
 */
export function checkCarrierChannel(request: SendRequest, carrierChannels: readonly string[]) {
  if (carrierChannels.includes(request.channel)) return;
  if (request.fallback && carrierChannels.includes(request.fallback)) return;
  throw new DomainError(
    "channel-unavailable",
    `the platform's carrier cannot send ${request.channel}${request.fallback ? ` nor ${request.fallback}` : ""}; it sends ${carrierChannels.join(", ")}`,
    { extensions: { channel: request.channel } },
  );
}

export function checkTemplate(
  request: SendRequest,
  facts: SendFacts,
  errors: FieldErrors,
): SendTemplate {
  const template = facts.template;
  if (!template) {
    if (request.templateVersion !== undefined) {
      errors.add("#/template_version", `the template has no version ${request.templateVersion}`);
    } else errors.add("#/template_id", "no template of this account has this id");
    return errors.fail();
  }
  if (template.status !== "approved") {
    errors.add("#/template_version", `version ${template.version} is not approved`);
  }
  for (const channel of channelsOf(request)) {
    if (!template.channels.includes(channel)) {
      errors.add(
        channel === request.channel ? "#/channel" : "#/fallback",
        `template ${template.id} version ${template.version} is not approved for ${channel} (only ${template.channels.join(", ")})`,
      );
    }
  }
  return template;
}

export function render(request: SendRequest, template: SendTemplate, errors: FieldErrors): string {
  const rendered = renderTemplate(template.body, template.variables, request.variables);
  if (rendered.body === undefined) {
    for (const name of rendered.missing) {
      errors.add(
        `#/variables/${escapePointer(name)}`,
        `is required by template version ${template.version}`,
      );
    }
    for (const name of rendered.unknown) {
      errors.add(
        `#/variables/${escapePointer(name)}`,
        `is not a variable of template version ${template.version}`,
      );
    }
    return "";
  }
  const length = characterCount(rendered.body);
  if (length > maxBodyCharacters) {
    errors.add(
      "#/variables",
      `the rendered body is ${length} characters; at most ${maxBodyCharacters} are allowed`,
    );
  } else if (rendered.body.trim() === "") {
    errors.add("#/variables", "the rendered body is empty");
  }
  return rendered.body;
}

const escapePointer = (segment: string): string => segment.replace(/~/g, "~0").replace(/\//g, "~1");

/** Opt-out first (it outranks any consent), then the consent itself. */
export function checkRecipient(request: SendRequest, facts: SendFacts): void {
  if (facts.optOut) {
    throw new DomainError(
      "recipient-opted-out",
      `${request.to} opted out (${facts.optOut.keyword.toUpperCase()}); only their START or UNSTOP opts them back in`,
    );
  }
  const consent = facts.consent;
  const required = (detail: string) =>
    new DomainError("consent-required", detail, { extensions: { consent_id: request.consentId } });
  if (!consent) throw required(`consent ${request.consentId} is not a consent of this account`);
  if (consent.phone_number !== request.to) {
    throw required(`consent ${consent.id} was given by ${consent.phone_number}, not ${request.to}`);
  }
  const missing = channelsOf(request).filter((channel) => !consent.channels.includes(channel));
  if (missing.length > 0) {
    throw required(`consent ${consent.id} does not cover ${missing.join(" and ")}`);
  }
  if (consent.status !== "granted") throw required(`consent ${consent.id} is ${consent.status}`);
}
