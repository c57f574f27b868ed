import { textHeader, type SipMessage } from "./message.js";

/**
 * The little SDP (RFC 4566, RFC 3264) the signalling needs: the platform relays offers and
 * answers untouched and never reads media.
 */

/** Whether a message carries an SDP body (Content-Type application/sdp, not empty). */
export const carriesSdp = (message: SipMessage): boolean =>
  !!message.content && /^application\/sdp\b/i.test(textHeader(message, "content-type") ?? "");

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
  return [
    "v=0",
    `o=switchboard ${version} ${version} IN IP4 0.0.0.0`,
    "s=-",
    "c=IN IP4 0.0.0.0",
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
 * A stream the offer refused (port 0) stays refused.
 */
export function heldAnswer(offer: string): string {
  const lines: string[] = [];
  let inMedia = false;
  for (const line of offer.split(/\r?\n/)) {
    if (line.startsWith("m=")) {
      inMedia = true;
      const [kind = "audio", port = "0", proto = "RTP/AVP", ...formats] = line.slice(2).split(" ");
      const answerPort = port.split("/")[0] === "0" ? "0" : "9";
      lines.push(`m=${kind} ${answerPort} ${proto} ${formats.join(" ") || "0"}`, "a=inactive");
    } else if (inMedia && /^a=(rtpmap|fmtp):/.test(line)) {
      lines.push(line);
    }
  }
  const session = Date.now();
  return [
    "v=0",
    `o=switchboard ${session} ${session} IN IP4 0.0.0.0`,
    "s=-",
    "c=IN IP4 0.0.0.0",
    "t=0 0",
    ...(lines.length > 0 ? lines : ["m=audio 0 RTP/AVP 0"]),
    "",
  ].join("\r\n");
}
