import type { SipTransportName } from "../../sip/stack/transport.js";

/** Our Contact URI at `address` (`host:port`) over `transport` (RFC 3261 §19.1.1 `transport`). */
export const contactUri = (address: string, transport: SipTransportName): string =>
  `sip:switchboard@${address}${transport === "udp" ? "" : `;transport=${transport}`}`;
