import { isIP } from "node:net";
import { routeEntries } from "../dialogs/dialog-requests.js";
import { textHeader, type SipRequest } from "../stack/message.js";
import { parseSipUri } from "../stack/sip-host.js";
import type { SipFlow } from "../stack/transport.js";
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

function nextHopOf(entry: string): SipFlow | undefined {
  const uri = /^<([^>]*)>/.exec(entry)?.[1];
  const parsed = uri === undefined ? undefined : parseSipUri(uri);
  if (!parsed || isIP(parsed.address) === 0) return undefined;
  const transport = (parsed.params.transport ?? "udp").toLowerCase();
  if (transport !== "udp" && transport !== "tcp") return undefined;
  const port = parsed.port !== undefined && parsed.port > 0 ? parsed.port : 5060;
  return { transport, address: parsed.address, port };
}
