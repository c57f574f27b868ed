import { sipUriParts, textHeader, type SipRequest } from "./message.js";

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

/** What an inbound call needs of the trunk's INVITE, or the status refusing it. */
export type InboundInvite =
  | { ok: true; to: string; from: string; offer: string; contact: string; remoteTag: string }
  | { ok: false; status: number; reason?: string };

/**
 * The DID called (the Request-URI's user, else the To's), the caller (From's user), the
 * trunk's SDP offer, its Contact and its tag. No E.164 DID: 404; no E.164 caller: 484 (the
 * platform's calls always name an E.164 caller); no SDP offer: 488; no From tag or Contact: 400.
 */
export function readInboundInvite(request: SipRequest): InboundInvite {
  const to = e164User(request.uri) ?? e164User(request.headers.to.uri);
  if (!to) return { ok: false, status: 404 };
  const remoteTag = request.headers.from.params.tag;
  const contact = request.headers.contact;
  const target = Array.isArray(contact) ? contact[0]?.uri : undefined;
  if (!remoteTag || !target) return { ok: false, status: 400 };
  const from = e164User(request.headers.from.uri);
  if (!from) return { ok: false, status: 484, reason: "Address Incomplete" };
  const sdp = /^application\/sdp\b/i.test(textHeader(request, "content-type") ?? "");
  if (!sdp || !request.content) return { ok: false, status: 488 };
  return {
    ok: true,
    to,
    from,
    offer: request.content,
    contact: target,
    remoteTag: String(remoteTag),
  };
}
