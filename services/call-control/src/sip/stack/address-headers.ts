import type sip from "sip";
import { hostAddress } from "./sip-host.js";

/**
 * The headers that name hosts, read here rather than by the `sip` package, whose grammar has no
 * IPv6 references (README "The `sip` package"): Via (RFC 3261 §20.42: `SIP/2.0/UDP
 * [2001:db8::1]:5060;branch=…;received=2001:db8::1`) and the name-addr lists Route,
 * Record-Route and Path (`<sip:[2001:db8::1];lr>`), whose URIs it cannot parse.
 */

type RouteEntry = { name?: string; uri: string; params: Record<string, string | null> };

const tokenChars = "[A-Za-z0-9\\-.!%*_+`'~]";
/**
 * `;name[=value]`: a token, a quoted-string, an IPv6 reference, or (Via's `received`, RFC 3261
 * §20.42 writes IPv6address there, RFC 5118 §4.5 both) a bare IPv6 address.
 */
const param = new RegExp(
  `\\s*;\\s*(${tokenChars}+)(?:\\s*=\\s*(${tokenChars.slice(0, -1)}:]+|\\[[0-9A-Fa-f:.]+\\]|"(?:[^"\\\\]|\\\\.)*"))?`,
  "y",
);
const comma = /\s*,\s*/y;
const viaStart = new RegExp(
  `\\s*SIP\\s*/\\s*(\\d+\\.\\d+)\\s*/\\s*(${tokenChars}+)\\s+(\\[[0-9A-Fa-f:.]+\\]|[^\\s;:,[\\]]+)(?:\\s*:\\s*(\\d{1,5}))?`,
  "y",
);
const nameAddr =
  /\s*((?:[A-Za-z0-9\-.!%*_+`'~]+(?:\s+[A-Za-z0-9\-.!%*_+`'~]+)*)|"(?:[^"\\]|\\.)*")?\s*<([^>]*)>/y;

interface Cursor {
  text: string;
  at: number;
}

function take(regex: RegExp, cursor: Cursor): RegExpExecArray | undefined {
  regex.lastIndex = cursor.at;
  const match = regex.exec(cursor.text);
  if (!match) return undefined;
  cursor.at = regex.lastIndex;
  return match;
}

function paramsOf(cursor: Cursor): Record<string, string | null> {
  const params: Record<string, string | null> = {};
  for (let match = take(param, cursor); match; match = take(param, cursor)) {
    params[match[1]!.toLowerCase()] = match[2] ?? null;
  }
  return params;
}

/** A list of entries: each read by `entry`, separated by commas; undefined when one cannot be. */
function listOf<T>(value: string, entry: (cursor: Cursor) => T | undefined): T[] | undefined {
  const cursor = { text: value, at: 0 };
  const entries: T[] = [];
  do {
    const read = entry(cursor);
    if (read === undefined) return undefined;
    entries.push(read);
  } while (cursor.at < value.length && take(comma, cursor));
  return entries;
}

/**
 * One Via header's value (one via-parm or several): the host as written, brackets kept (a name
 * is taken as loosely as the `sip` package takes it; an IPv6 reference must be an address).
 */
export function parseVias(value: string): sip.Via[] | undefined {
  return listOf(value, (cursor) => {
    const start = take(viaStart, cursor);
    if (!start) return undefined;
    const [, version = "", protocol = "", host = "", port] = start;
    if (hostAddress(host) === undefined) return undefined;
    return {
      version,
      protocol,
      host,
      ...(port !== undefined ? { port: Number(port) } : {}),
      params: paramsOf(cursor),
    };
  });
}

/** One Route, Record-Route or Path header's value: name-addrs with their URIs as written. */
export function parseRouteEntries(value: string): RouteEntry[] | undefined {
  return listOf(value, (cursor) => {
    const match = take(nameAddr, cursor);
    if (!match) return undefined;
    return {
      ...(match[1] !== undefined ? { name: match[1] } : {}),
      uri: match[2]!.trim(),
      params: paramsOf(cursor),
    };
  });
}

const readers = {
  via: parseVias,
  v: parseVias,
  route: parseRouteEntries,
  "record-route": parseRouteEntries,
  path: parseRouteEntries,
} as const;
const fullNames: Record<string, "via" | "route" | "record-route" | "path"> = {
  via: "via",
  v: "via",
  route: "route",
  "record-route": "record-route",
  path: "path",
};

/**
 * Reads Via, Route, Record-Route and Path from the message's header block (several headers of
 * one name in order) into `headers`, over what the library made of them; false when one of
 * them cannot be read (the message is then no valid one).
 */
export function readAddressHeaders(data: Buffer | string, headers: sip.Headers): boolean {
  const text = typeof data === "string" ? data : data.toString("latin1");
  const end = text.indexOf("\r\n\r\n");
  const lines = (end < 0 ? text : text.slice(0, end)).split(/\r\n(?![ \t])/).slice(1);
  const found: Record<string, unknown[]> = {};
  for (const line of lines) {
    const match = /^([^\s:]+)\s*:\s*([\s\S]*)$/.exec(line);
    const name = match?.[1]?.toLowerCase();
    if (!match || name === undefined || !(name in readers)) continue;
    const entries = readers[name as keyof typeof readers](match[2]!.replace(/\r\n[ \t]+/g, " "));
    if (entries === undefined) return false;
    (found[fullNames[name]!] ??= []).push(...entries);
  }
  Object.assign(headers, found);
  return true;
}
