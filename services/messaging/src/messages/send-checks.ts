import { e164Pattern, FieldErrors, isId, requireAccount } from "@switchboard/kit";
import { wire, type messaging } from "@switchboard/proto";
import { channels, isChannel, spelled, type Channel } from "../validation.js";

export const maxMediaUrls = 10;
export const maxMediaUrlLength = 2_048;
export const maxTtlSeconds = 36_000;
export const defaultTtlSeconds = 36_000;

/** A SendMessageRequest with its channels as the API spells them ("" for an unknown one). */
export type SendRequest = Omit<messaging.SendMessageRequest, "channel" | "fallback"> & {
  channel: string;
  fallback?: string;
};

export const spellSendRequest = (request: messaging.SendMessageRequest): SendRequest => ({
  ...request,
  channel: spelled(wire.channel, request.channel),
  fallback: request.fallback === undefined ? undefined : spelled(wire.channel, request.fallback),
});

/** The request's shape, checked before anything is looked up. */
export function checkSendShape(request: SendRequest): FieldErrors {
  const errors = requireAccount(request.accountId);
  const channel = request.channel;
  if (!isChannel(channel)) errors.add("#/channel", `must be one of ${channels.join(", ")}`);
  if (!e164Pattern.test(request.to))
    errors.add("#/to", "must be an E.164 number such as +14155550123");
  if (!e164Pattern.test(request.from) && !isId(request.from, "num")) {
    errors.add("#/from", "must be one of the account's numbers (E.164 or num_ id)");
  }
  if (!isId(request.templateId, "tpl"))
    errors.add("#/template_id", "must be a template id (tpl_…)");
  const version = request.templateVersion;
  if (version !== undefined && (!Number.isInteger(version) || version < 1)) {
    errors.add("#/template_version", "must be a positive integer");
  }
  if (!isId(request.consentId, "cns")) errors.add("#/consent_id", "must be a consent id (cns_…)");
  const ttl = request.ttlSeconds;
  if (ttl !== undefined && (!Number.isInteger(ttl) || ttl < 1 || ttl > maxTtlSeconds)) {
    errors.add("#/ttl_seconds", `must be an integer from 1 to ${maxTtlSeconds}`);
  }
  checkMedia(request, errors);
  checkFallback(request, errors);
  return errors;
}

function checkMedia(request: SendRequest, errors: FieldErrors): void {
  const media = request.mediaUrls;
  if (request.channel === "sms" && media.length > 0) {
    errors.add("#/media_urls", "sms carries no media: send it as mms (or rcs)");
  }
  if (request.channel === "mms" && media.length === 0) {
    errors.add("#/media_urls", "an mms message needs at least one media URL");
  }
  if (media.length > maxMediaUrls) {
    errors.add("#/media_urls", `must hold at most ${maxMediaUrls} URLs`);
  }
  media.forEach((value, index) => {
    const pointer = `#/media_urls/${index}`;
    if (value.length > maxMediaUrlLength) {
      errors.add(pointer, `must be at most ${maxMediaUrlLength} characters`);
      return;
    }
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      errors.add(pointer, "must be an absolute https URL");
      return;
    }
    if (url.protocol !== "https:") errors.add(pointer, "must be an https URL");
    else if (url.username || url.password) errors.add(pointer, "must not carry credentials");
  });
}

function checkFallback(request: SendRequest, errors: FieldErrors): void {
  const fallback = request.fallback;
  if (fallback === undefined) return;
  if (fallback !== "sms" && fallback !== "mms") {
    errors.add("#/fallback", "must be sms, mms or null");
  } else if (request.channel !== "rcs") {
    errors.add("#/fallback", "only rcs messages fall back; leave it null for sms and mms");
  } else if (fallback === "sms" && request.mediaUrls.length > 0) {
    errors.add("#/fallback", "media cannot fall back to sms: use mms");
  }
}

/** The channels a send may use: the requested one and its fallback. */
export const channelsOf = (request: SendRequest): Channel[] =>
  [request.channel, request.fallback].filter((c): c is Channel => c !== undefined && isChannel(c));
