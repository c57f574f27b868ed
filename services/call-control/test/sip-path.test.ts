import { describe, expect, it } from "vitest";
import {
  pathOf,
  phoneDialogOnTls,
  phoneOrigin,
  phoneRoute,
  supportsPath,
} from "../src/sip/registrar/path.js";
import { parseMessage, type SipRequest } from "../src/sip/stack/message.js";
import type { PhoneAddress } from "../src/sip/registrar/registrations.js";

const register = (...headers: string[]) =>
  parseMessage(
    [
      "REGISTER sip:sip.example.test SIP/2.0",
      "Via: SIP/2.0/UDP 10.1.0.5:5080;branch=z9hG4bKe1",
      "Via: SIP/2.0/TCP 192.168.1.20:5060;branch=z9hG4bKp1;received=198.51.100.7;rport=40123",
      "From: <sip:seat@sip.example.test>;tag=1",
      "To: <sip:seat@sip.example.test>",
      "Call-ID: r1",
      "CSeq: 1 REGISTER",
      ...headers,
      "Content-Length: 0",
      "",
      "",
    ].join("\r\n"),
  ) as SipRequest;

const phone: PhoneAddress = {
  contact_uri: "sip:seat@192.168.1.20:5060;transport=tcp",
  transport: "udp",
  source_address: "10.1.0.5",
  source_port: 5080,
  path: [],
};

describe("Path (RFC 3327) at the registrar", () => {
  it("reads the Path entries as written, the nearest proxy first, across headers", () => {
    const request = register(
      "Path: <sip:10.1.0.5:5080;lr;received=sip:198.51.100.7:40123%3Btransport%3Dtcp>",
      "Path: <sip:outer.example.test;lr>",
    );
    expect(pathOf(request)).toEqual([
      "<sip:10.1.0.5:5080;lr;received=sip:198.51.100.7:40123%3Btransport%3Dtcp>",
      "<sip:outer.example.test;lr>",
    ]);
    expect(pathOf(register())).toEqual([]);
  });

  it("refuses more entries than a registration keeps", () => {
    const six = Array.from({ length: 6 }, (_, i) => `<sip:p${i}.example.test;lr>`).join(", ");
    expect(pathOf(register(`Path: ${six}`))).toBe("too long");
    expect(pathOf(register(`Path: <sip:${"a".repeat(1100)}.test;lr>`))).toBe("too long");
  });

  it("echoes the Path only to a UA that lists path in Supported", () => {
    expect(supportsPath(register("Supported: outbound, Path"))).toBe(true);
    expect(supportsPath(register("Supported: outbound, gruu"))).toBe(false);
    expect(supportsPath(register())).toBe(false);
  });

  it("sends to a phone through its Path's first entry, the Path as the Route set", () => {
    const path = ["<sip:10.1.0.9:5080;lr;received=sip:198.51.100.7:40123%3Btransport%3Dtcp>"];
    expect(phoneRoute({ ...phone, path })).toEqual({
      flow: { transport: "udp", address: "10.1.0.9", port: 5080 },
      routeSet: path,
    });
    // Default port 5060, the entry's transport.
    expect(phoneRoute({ ...phone, path: ["<sip:10.1.0.9;transport=tcp;lr>"] }).flow).toEqual({
      transport: "tcp",
      address: "10.1.0.9",
      port: 5060,
    });
    // A name (or a transport we do not speak): to the REGISTER's source, the same proxy.
    for (const entry of ["<sip:edge.example.test:5080;lr>", "<sip:10.1.0.9;transport=sctp;lr>"]) {
      expect(phoneRoute({ ...phone, path: [entry] })).toEqual({
        flow: { transport: "udp", address: "10.1.0.5", port: 5080 },
        routeSet: [entry],
      });
    }
  });

  it("sends to a phone without a Path where its REGISTER came from, with no Route", () => {
    expect(phoneRoute(phone)).toEqual({
      flow: { transport: "udp", address: "10.1.0.5", port: 5080 },
      routeSet: [],
    });
  });

  it("knows the phone behind the edge by its Path's received: on TLS there, from its own address", () => {
    const edge = "<sip:10.1.0.9:5080;lr;received=sip:198.51.100.7:40123%3Btransport%3Dtls>";
    expect(phoneOrigin({ ...phone, path: [edge] })).toEqual({
      transport: "tls",
      address: "198.51.100.7",
    });
    // The entry nearest the phone (the last) is the one that saw it.
    expect(
      phoneOrigin({
        ...phone,
        path: ["<sip:10.1.0.2:5080;lr;received=sip:10.1.0.9:5080>", edge],
      }),
    ).toEqual({ transport: "tls", address: "198.51.100.7" });
    expect(
      phoneOrigin({
        ...phone,
        path: ["<sip:10.1.0.9:5080;lr;received=sip:198.51.100.7:40123%3Btransport%3Dtcp>"],
      }),
    ).toEqual({ transport: "tcp", address: "198.51.100.7" });
  });

  it("takes the registration's source for the phone without a Path, or a Path that does not say", () => {
    expect(phoneOrigin(phone)).toEqual({ transport: "udp", address: "10.1.0.5" });
    expect(phoneOrigin({ ...phone, transport: "tls" })).toEqual({
      transport: "tls",
      address: "10.1.0.5",
    });
    for (const entry of [
      "<sip:10.1.0.9:5080;lr>",
      "<sip:10.1.0.9:5080;lr;received=sip:phone.example.test:5061%3Btransport%3Dtls>",
      "<sip:10.1.0.9:5080;lr;received=sip:198.51.100.7%3Btransport%3Dsctp>",
      "<sip:10.1.0.9:5080;lr;received=%E0%A4%A>",
      "<sip:10.1.0.9:5080;lr;received>",
    ]) {
      expect(phoneOrigin({ ...phone, path: [entry] }), entry).toEqual({
        transport: "udp",
        address: "10.1.0.5",
      });
    }
  });

  it("knows a dialog's phone is on TLS by our hop, or by the edge's Record-Route on the phone's side", () => {
    const core = "<sip:10.1.0.9:5080;r2=on;lr>";
    expect(phoneDialogOnTls({ flow_transport: "tls", route_set: [] })).toBe(true);
    expect(phoneDialogOnTls({ flow_transport: "udp", route_set: [] })).toBe(false);
    expect(
      phoneDialogOnTls({
        flow_transport: "udp",
        route_set: [core, "<sip:203.0.113.5:5061;transport=tls;r2=on;lr>"],
      }),
    ).toBe(true);
    expect(
      phoneDialogOnTls({ flow_transport: "udp", route_set: [core, "<sips:203.0.113.5;lr>"] }),
    ).toBe(true);
    expect(
      phoneDialogOnTls({
        flow_transport: "udp",
        route_set: [core, "<sip:203.0.113.5:5060;transport=tcp;r2=on;lr>"],
      }),
    ).toBe(false);
    // Only the entry nearest the phone counts.
    expect(
      phoneDialogOnTls({
        flow_transport: "udp",
        route_set: ["<sip:203.0.113.5:5061;transport=tls;lr>", core],
      }),
    ).toBe(false);
  });
});
