import { anonymousCaller } from "../calls/inbound.js";
import { sipUriParts, textHeader, type SipRequest } from "./stack/message.js";
import { carriesSdp } from "./stack/sdp.js";

const e164 = /^\+[1-9]\d{1,14}$/;

/** A URI's user part as an E.164 number (`+` added when missing; visual separators dropped). */
export function e164User(uri: string): string | undefined {
  const user = sipUriParts(uri)?.user;
  if (!user) return undefined;
  let digits: string;
  try {
    digits = decodeURIComponent(user.split(";")[0]!).replace(/[-.()]/g, "");
  } catch {
    return undefined; // a malformed escape is no number
  }
  const number = digits.startsWith("+") ? digits : `+${digits}`;
  return e164.test(number) ? number : undefined;
}

/**
 * Whether the caller withholds its number: a From of RFC 3323 §4.1.1.3's form
 * (`sip:anonymous@anonymous.invalid`, the user or the host saying so), or a Privacy header
 * asking to hide the identity (`id`, RFC 3325 §9.3) or the From (`user`, `header`).
 */
export function callerWithheld(request: SipRequest): boolean {
  const parts = sipUriParts(request.headers.from.uri);
  if (parts?.user?.toLowerCase() === "anonymous" || parts?.host === "anonymous.invalid") {
    return true;
  }
  const privacy = (textHeader(request, "privacy") ?? "").toLowerCase().split(/[;,]/);
  return privacy.some((value) => ["id", "user", "header"].includes(value.trim()));
}

/** The longest P-Asserted-Identity kept (the column's bound). */
const maxAssertedIdentity = 512;

/**
 * The trunk's P-Asserted-Identity (RFC 3325 §9.1) as written (several: joined by ", "), if any
 * and short enough to keep. It is the platform's to keep, never the account's to see.
 */
export function assertedIdentityOf(request: SipRequest): string | undefined {
  const value = textHeader(request, "p-asserted-identity");
  return value && value.length <= maxAssertedIdentity ? value : undefined;
}

/** What an inbound call needs of the trunk's INVITE, or the status refusing it. */
export type InboundInvite =
  | {
      ok: true;
      to: string;
      /** E.164, or "anonymous" when the caller withholds its number. */
      from: string;
      assertedIdentity: string | undefined;
      offer: string;
      contact: string;
      remoteTag: string;
    }
  | { ok: false; status: number; reason?: string };

/**
 * The DID called (the Request-URI's user, else the To's), the caller (From's user, or
 * "anonymous" when it withholds its number), the trunk's P-Asserted-Identity, its SDP offer,
 * its Contact and its tag. No E.164 DID: 404; a caller neither E.164 nor withheld: 484; no SDP
 * offer: 488; no From tag or Contact: 400.
 */
export function readInboundInvite(request: SipRequest): InboundInvite {
  const to = e164User(request.uri) ?? e164User(request.headers.to.uri);
  if (!to) return { ok: false, status: 404 };
  const remoteTag = request.headers.from.params.tag;
  const contact = request.headers.contact;
  const target = Array.isArray(contact) ? contact[0]?.uri : undefined;
  if (!remoteTag || !target) return { ok: false, status: 400 };
  const from = callerWithheld(request) ? anonymousCaller : e164User(request.headers.from.uri);
  if (!from) return { ok: false, status: 484, reason: "Address Incomplete" };
  if (!carriesSdp(request)) return { ok: false, status: 488 };
  return {
    ok: true,
    to,
    from,
    assertedIdentity: assertedIdentityOf(request),
    offer: request.content!,
    contact: target,
    remoteTag: String(remoteTag),
  };
}
