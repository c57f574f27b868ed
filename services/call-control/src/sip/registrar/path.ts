import { isIP } from "node:net";
import { routeEntries } from "../dialogs/dialog-requests.js";
import { textHeader, type SipRequest } from "../stack/message.js";
import { parseSipUri, type SipUriParts } from "../stack/sip-host.js";
import type { SipFlow, SipTransportName } from "../stack/transport.js";
import type { PhoneAddress } from "./registrations.js";

/**
 * Path (RFC 3327): a proxy in front of the registrar (the SIP edge that holds a phone's TCP or
 * TLS connection, or its NAT binding) adds itself to the phone's REGISTER; the registrar keeps
 * the entries with the binding, and every request to that phone goes through them, as its
 * preloaded Route set (§5), so any replica reaches the phone through the edge that owns its
 * connection.
 */

/** At most this many Path entries are kept per registration (the column's check). */
export const maxPathEntries = 5;
const maxPathEntryLength = 1024;

/**
 * The REGISTER's Path entries as written (`<uri>;params`), the proxy nearest to us first (each
 * proxy adds its own on top); "too long" when more than `maxPathEntries` or one is overlong.
 */
export function pathOf(request: SipRequest): string[] | "too long" {
  const entries = routeEntries(request.headers.path ?? []);
  if (entries.length > maxPathEntries || entries.some((e) => e.length > maxPathEntryLength)) {
    return "too long";
  }
  return entries;
}

/** Whether the request's Supported lists `path` (then a 200 to its REGISTER echoes the Path). */
export function supportsPath(request: SipRequest): boolean {
  return (textHeader(request, "supported") ?? "")
    .split(",")
    .some((option) => option.trim().toLowerCase() === "path");
}

/**
 * Where a request to a registered phone goes: with a Path, to its first entry's address (an IP
 * literal; a name falls back to the source its REGISTER came from, the same proxy) with the
 * whole Path as the Route set (RFC 3261 §8.1.2: the first Route names the next hop, loose
 * routing); without one, to the registration's source (its NAT binding or connection).
 */
export function phoneRoute(phone: PhoneAddress): { flow: SipFlow; routeSet: string[] } {
  const source: SipFlow = {
    transport: phone.transport,
    address: phone.source_address,
    port: phone.source_port,
  };
  const [first] = phone.path;
  if (first === undefined) return { flow: source, routeSet: [] };
  return { flow: nextHopOf(first) ?? source, routeSet: phone.path };
}

/**
 * The phone itself, as seen by whoever it talks to: behind an edge, its transport and address at
 * the edge that holds its connection (the `received` of the Path entry nearest the phone, the last:
 * `received=sip:<ip>:<port>;transport=tls`, escaped, as the chart's edge writes it); without a
 * Path (or without `received`), the registration's source. It says whether the phone is on TLS
 * (its media then SRTP) and where its media comes from (the RTP relay's source).
 */
export function phoneOrigin(phone: PhoneAddress): { transport: SipTransportName; address: string } {
  const source = { transport: phone.transport, address: phone.source_address };
  const last = phone.path.at(-1);
  const received = last === undefined ? undefined : uriOf(last)?.params.received;
  if (!received) return source;
  let flow: SipFlow | undefined;
  try {
    flow = flowOf(parseSipUri(decodeURIComponent(received)));
  } catch {
    return source; // not percent-encoding
  }
  return flow ? { transport: flow.transport, address: flow.address } : source;
}

/**
 * Whether the phone of a dialog we opened (its leg's flow and route set) is on TLS: our own hop
 * to it, or behind the edge the edge's hop to it, which its Record-Route on the phone's side says
 * (the route set's entry nearest the phone, the last: `transport=tls`, or a `sips:` URI).
 */
export function phoneDialogOnTls(leg: {
  flow_transport: SipTransportName;
  route_set: string[];
}): boolean {
  if (leg.flow_transport === "tls") return true;
  const last = leg.route_set.at(-1);
  const uri = last === undefined ? undefined : uriOf(last);
  return uri?.scheme === "sips" || uri?.params.transport?.toLowerCase() === "tls";
}

/** The next hop an entry names: an IP address over UDP or TCP (we open no TLS to an edge). */
function nextHopOf(entry: string): SipFlow | undefined {
  const uri = uriOf(entry);
  const flow = uri && flowOf(uri);
  return flow?.transport === "tls" ? undefined : flow;
}

/** The entry's URI (between its angle brackets), parsed (IPv6 references too, RFC 5118). */
function uriOf(entry: string): SipUriParts | undefined {
  const uri = /^<([^>]*)>/.exec(entry)?.[1];
  return uri === undefined ? undefined : parseSipUri(uri);
}

/** A SIP URI naming an IP address over UDP, TCP or TLS, as a flow (port 5060 if unsaid). */
function flowOf(uri: SipUriParts | undefined): SipFlow | undefined {
  if (!uri || isIP(uri.address) === 0) return undefined;
  const transport = (uri.params.transport ?? "udp").toLowerCase();
  if (transport !== "udp" && transport !== "tcp" && transport !== "tls") return undefined;
  const port = uri.port !== undefined && uri.port > 0 ? uri.port : 5060;
  return { transport, address: uri.address, port };
}
