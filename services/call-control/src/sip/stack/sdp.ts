import { randomBytes } from "node:crypto";
import { textHeader, type SipMessage } from "./message.js";

/**
 * The little SDP (RFC 4566, RFC 3264) the signalling needs: the platform relays offers and
 * answers untouched and never reads media.
 */

/** Whether a message carries an SDP body (Content-Type application/sdp, not empty). */
export const carriesSdp = (message: SipMessage): boolean =>
  !!message.content && /^application\/sdp\b/i.test(textHeader(message, "content-type") ?? "");

/** Whether an SDP offers a stream over SRTP (an m-line whose profile is RTP/SAVP or RTP/SAVPF). */
export const offersSecureMedia = (sdp: string): boolean =>
  sdp.split(/\r?\n/).some((line) => /^m=\S+ [1-9]\d*(?:\/\d+)? (?:\S+\/)?RTP\/SAVPF?\b/.test(line));

/** The master key + salt length of an SDES crypto suite (RFC 4568 §6.2, RFC 6188, RFC 7714). */
const sdesKeyBytes: Record<string, number> = {
  AES_CM_128_HMAC_SHA1_80: 30,
  AES_CM_128_HMAC_SHA1_32: 30,
  F8_128_HMAC_SHA1_80: 30,
  AES_192_CM_HMAC_SHA1_80: 38,
  AES_192_CM_HMAC_SHA1_32: 38,
  AES_256_CM_HMAC_SHA1_80: 46,
  AES_256_CM_HMAC_SHA1_32: 46,
  AEAD_AES_128_GCM: 28,
  AEAD_AES_256_GCM: 44,
};

/**
 * An SDES answer line to a stream's offered `a=crypto` lines (RFC 4568 §6.1): the first suite
 * we know, its tag, a fresh random key; undefined when none is known.
 */
function cryptoAnswer(offered: string[]): string | undefined {
  for (const line of offered) {
    const match = /^a=crypto:(\d{1,9}) +([A-Z0-9_]+) /.exec(line);
    const bytes = match ? sdesKeyBytes[match[2]!] : undefined;
    if (match && bytes) {
      return `a=crypto:${match[1]} ${match[2]} inline:${randomBytes(bytes).toString("base64")}`;
    }
  }
  return undefined;
}

/**
 * The address type and unspecified address an answer to `offer` names (RFC 4566 §5.7): `IP6 ::`
 * when the offer's connection is IPv6 (RFC 5118 §4.6), else `IP4 0.0.0.0`.
 */
const unspecifiedAddressOf = (offer: string): string =>
  /^c=IN IP6 /m.test(offer) ? "IP6 ::" : "IP4 0.0.0.0";

/**
 * An answer refusing every stream of `offer` (each m-line with port 0, RFC 3264 §6): what the
 * ACK of a 2xx whose offer cannot be taken carries before its BYE (RFC 3261 §13.2.2.4).
 */
export function refusingAnswer(offer: string): string {
  const media = offer
    .split(/\r?\n/)
    .filter((line) => line.startsWith("m="))
    .map((line) => {
      const [kind = "audio", , proto = "RTP/AVP", format = "0"] = line.slice(2).split(" ");
      return `m=${kind} 0 ${proto} ${format}`;
    });
  const version = Date.now();
  const unspecified = unspecifiedAddressOf(offer);
  return [
    "v=0",
    `o=switchboard ${version} ${version} IN ${unspecified}`,
    "s=-",
    `c=IN ${unspecified}`,
    "t=0 0",
    ...(media.length > 0 ? media : ["m=audio 0 RTP/AVP 0"]),
    "",
  ].join("\r\n");
}

/**
 * An answer to `offer` that takes every stream but sends and receives nothing (each m-line at
 * the discard port 9, its formats and their rtpmap/fmtp kept, `a=inactive`, no address: RFC
 * 3264 §6 and §5.1; RFC 3725's "black hole"): what the ACK of an outbound call's phone carries
 * while the trunk rings, until the trunk's answer (or early media) comes in a re-INVITE.
 * A stream the offer refused (port 0) stays refused; an SRTP stream gets an SDES key of its own
 * for the first suite offered that it knows.
 */
export function heldAnswer(offer: string): string {
  const lines: string[] = [];
  let inMedia = false;
  /** The current stream's offered SDES keys, answered once the stream's lines are read. */
  let crypto: string[] | undefined;
  const endStream = () => {
    const line = crypto && cryptoAnswer(crypto);
    if (line) lines.push(line);
    crypto = undefined;
  };
  for (const line of offer.split(/\r?\n/)) {
    if (line.startsWith("m=")) {
      endStream();
      inMedia = true;
      const [kind = "audio", port = "0", proto = "RTP/AVP", ...formats] = line.slice(2).split(" ");
      const answerPort = port.split("/")[0] === "0" ? "0" : "9";
      lines.push(`m=${kind} ${answerPort} ${proto} ${formats.join(" ") || "0"}`, "a=inactive");
      // An SRTP stream's answer carries a key of its own (RFC 4568 §5.1.2), even held.
      if (answerPort !== "0" && /\/SAVPF?$/.test(proto)) crypto = [];
    } else if (inMedia && /^a=(rtpmap|fmtp):/.test(line)) {
      lines.push(line);
    } else if (crypto && line.startsWith("a=crypto:")) {
      crypto.push(line);
    }
  }
  endStream();
  const session = Date.now();
  const unspecified = unspecifiedAddressOf(offer);
  return [
    "v=0",
    `o=switchboard ${session} ${session} IN ${unspecified}`,
    "s=-",
    `c=IN ${unspecified}`,
    "t=0 0",
    ...(lines.length > 0 ? lines : ["m=audio 0 RTP/AVP 0"]),
    "",
  ].join("\r\n");
}
