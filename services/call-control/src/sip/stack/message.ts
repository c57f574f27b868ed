import { randomBytes } from "node:crypto";
import sip from "sip";
import { readAddressHeaders } from "./address-headers.js";
import { parseSipUri } from "./sip-host.js";

/**
 * SIP messages (RFC 3261 §7) as call-control handles them: the `sip` package parses and
 * serializes; this module checks what a message must have before anything reads it, and builds
 * responses.
 */
export type SipMessage = sip.Message;
export type SipHeaders = sip.Headers;
export type NameAddress = sip.NameAddress;
export type Via = sip.Via;

/** A request with the headers every request has (RFC 3261 §8.1.1), checked by `parseMessage`. */
export interface SipRequest extends SipMessage {
  method: string;
  uri: string;
  headers: SipHeaders & {
    via: Via[];
    to: NameAddress;
    from: NameAddress;
    "call-id": string;
    cseq: sip.CSeq;
  };
}

export interface SipResponse extends SipMessage {
  status: number;
  headers: SipRequest["headers"];
}

/** The largest message taken, over UDP or TCP (RFC 3261 §18.1.1 leaves UDP at the path MTU). */
export const maxMessageBytes = 16 * 1024;

const token = /^[A-Za-z0-9\-.!%*_+`'~]+$/;

/** The message in `data` (one datagram, or one message a stream framed), if it is a valid one. */
export function parseMessage(data: Buffer | string): SipRequest | SipResponse | undefined {
  if (data.length > maxMessageBytes) return undefined;
  let message: SipMessage | undefined;
  try {
    message = sip.parse(data);
  } catch {
    return undefined;
  }
  // Via and the route headers again, IPv6 references included (./address-headers.ts).
  if (!message || !readAddressHeaders(data, message.headers)) return undefined;
  return checkMessage(message);
}

/**
 * Whether a datagram's message says its body is longer than the bytes after its header block
 * (RFC 3261 §18.3: a request so cut short gets 400, a response is discarded). A Content-Length
 * that is not a number says nothing usable either.
 */
export function bodyCutShort(data: Buffer, message: SipMessage): boolean {
  const declared: unknown = message.headers["content-length"];
  if (declared === undefined) return false;
  if (typeof declared !== "number" || !Number.isSafeInteger(declared) || declared < 0) return true;
  const headerEnd = data.indexOf("\r\n\r\n");
  const bodyBytes = headerEnd < 0 ? 0 : data.length - headerEnd - 4;
  return declared > bodyBytes;
}

/** The message if it has the mandatory headers (RFC 3261 §8.1.1) in a usable shape. */
export function checkMessage(message: SipMessage): SipRequest | SipResponse | undefined {
  const h = message.headers;
  if (!Array.isArray(h.via) || h.via.length === 0 || !h.via[0]?.params) return undefined;
  if (typeof h["call-id"] !== "string" || h["call-id"].trim() === "") return undefined;
  if (!h.to?.uri || !h.from?.uri) return undefined;
  if (!h.cseq || !Number.isSafeInteger(h.cseq.seq) || !token.test(h.cseq.method)) {
    return undefined;
  }
  if (message.method !== undefined) {
    if (!token.test(message.method) || typeof message.uri !== "string") return undefined;
    // RFC 3261 §8.1.1.5: the CSeq method matches the request's (ACK and CANCEL included).
    if (h.cseq.method !== message.method) return undefined;
    return message as SipRequest;
  }
  if (typeof message.status !== "number" || message.status < 100 || message.status > 699) {
    return undefined;
  }
  return message as SipResponse;
}

export const isRequest = (message: SipRequest | SipResponse): message is SipRequest =>
  message.method !== undefined;

/** The wire form (Content-Length set from the body). */
export const serialize = (message: SipMessage): string => sip.stringify(message);

export const reasonPhrases: Record<number, string> = {
  100: "Trying",
  180: "Ringing",
  200: "OK",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  423: "Interval Too Brief",
  480: "Temporarily Unavailable",
  481: "Call/Transaction Does Not Exist",
  487: "Request Terminated",
  488: "Not Acceptable Here",
  491: "Request Pending",
  500: "Server Internal Error",
  503: "Service Unavailable",
  513: "Message Too Large",
  603: "Decline",
};

/**
 * A response to `request` (RFC 3261 §8.2.6): its Via, From, Call-ID and CSeq, its To with a tag
 * added to any response but 100 (the request's objects are copied, never changed), then
 * `headers` in order.
 */
export function responseTo(
  request: SipRequest,
  status: number,
  headers: SipHeaders = {},
  reason = reasonPhrases[status] ?? "",
): SipResponse {
  const to: NameAddress = { ...request.headers.to, params: { ...request.headers.to.params } };
  if (status > 100 && !to.params.tag) to.params.tag = newTag();
  return {
    status,
    reason,
    version: "2.0",
    headers: {
      via: request.headers.via.map((via) => ({ ...via, params: { ...via.params } })),
      to,
      from: request.headers.from,
      "call-id": request.headers["call-id"],
      cseq: request.headers.cseq,
      ...headers,
    },
  };
}

/** A To/From tag: 64 random bits (RFC 3261 §19.3 asks for at least 32). */
export const newTag = (): string => randomBytes(8).toString("hex");

/** A header the library keeps as text (several occurrences joined by ", "), trimmed. */
export function textHeader(message: SipMessage, name: string): string | undefined {
  const value = message.headers[name];
  return typeof value === "string" ? value.trim() : undefined;
}

/** A quoted-string's content (RFC 3261 §25.1: `\x` stands for x); a token is returned as is. */
export function unquote(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (!trimmed.startsWith('"')) return trimmed;
  if (trimmed.length < 2 || !trimmed.endsWith('"')) return undefined;
  return trimmed.slice(1, -1).replace(/\\(.)/g, "$1");
}

/** A value as a quoted-string (RFC 3261 §25.1). */
export const quote = (value: string): string => `"${value.replace(/(["\\])/g, "\\$1")}"`;

/** The URI inside a name-addr's angle brackets as the library gives it, or the addr-spec. */
export const addressUri = (address: NameAddress): string => address.uri.trim();

/**
 * The parts of a SIP URI the registrar reads, or undefined for another scheme or a bad URI; the
 * host lower-cased, an IPv6 reference as `[canonical address]` (`./sip-host.ts`).
 */
export function sipUriParts(
  uri: string,
): { user: string | undefined; host: string; port: number | undefined } | undefined {
  const parsed = parseSipUri(uri);
  return parsed && { user: parsed.user, host: parsed.host, port: parsed.port };
}

/** A new Via branch (RFC 3261 §8.1.1.7: the magic cookie, then random). */
export const newBranch = (): string => sip.generateBranch();
