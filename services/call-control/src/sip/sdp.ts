/**
 * The little SDP (RFC 4566, RFC 3264) the signalling needs: the platform relays offers and
 * answers untouched and never reads media.
 */

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
