import { createSocket, type Socket } from "node:dgram";
import { connect as connectTls } from "node:tls";
import { createLogger } from "@switchboard/kit";
import { selfSignedCertificate } from "@switchboard/test-support/tls-certificate";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callControlSettings } from "../src/config.js";
import { recordRouteOf } from "../src/sip/dialogs/dialog-requests.js";
import { phoneRoute } from "../src/sip/registrar/path.js";
import { receivedFrom } from "../src/sip/rtp-relay.js";
import { startSipEndpoint, type SipEndpoint } from "../src/sip/stack/endpoint.js";
import {
  parseMessage,
  serialize,
  sipUriParts,
  type SipRequest,
  type SipResponse,
} from "../src/sip/stack/message.js";
import { heldAnswer, refusingAnswer } from "../src/sip/stack/sdp.js";
import { parseHostPort, parseSipUri, sipHostPort } from "../src/sip/stack/sip-host.js";
import { allowedSource, parseAddressBlock } from "../src/sip/trunk-allow.js";
import { parseTrunkUri, trunkRequestUri } from "../src/sip/trunk-uris.js";

const logger = createLogger("sip-ipv6-test", { level: "silent" });

const message = (lines: string[], body = "") =>
  [...lines, `Content-Length: ${body.length}`, "", body].join("\r\n");

/** RFC 5118 §4.1 (ipv6-good), with our own branch and tags. */
const ipv6Good = message([
  "REGISTER sip:[2001:db8::10] SIP/2.0",
  "To: sip:user@example.com",
  "From: sip:user@example.com;tag=81x2",
  "Via: SIP/2.0/UDP [2001:db8::9:1];branch=z9hG4bKas3-111",
  "Call-ID: SSG9559905523997077@hlau_4100",
  "Max-Forwards: 70",
  'Contact: "Caller" <sip:caller@[2001:db8::1]>',
  "CSeq: 98176 REGISTER",
]);

describe("IPv6 references in SIP messages (RFC 3261 §25.1, RFC 5118)", () => {
  it("reads RFC 5118 §4.1: the Request-URI, Via and Contact with IPv6 references", () => {
    const request = parseMessage(ipv6Good) as SipRequest;
    expect(request).toBeDefined();
    expect(request.headers.via[0]).toMatchObject({
      protocol: "UDP",
      host: "[2001:db8::9:1]",
      params: { branch: "z9hG4bKas3-111" },
    });
    expect(request.headers.via[0]!.port).toBeUndefined();
    expect(sipUriParts(request.uri)).toEqual({
      user: undefined,
      host: "[2001:db8::10]",
      port: undefined,
    });
    const contact = request.headers.contact as { uri: string }[];
    expect(sipUriParts(contact[0]!.uri)).toMatchObject({ user: "caller", host: "[2001:db8::1]" });
  });

  it("refuses RFC 5118 §4.2's unbracketed address and 4.10's three colons; keeps 4.3's port inside the brackets", () => {
    expect(sipUriParts("sip:2001:db8::10")).toBeUndefined();
    expect(sipUriParts("sip:user@2001:db8::10")).toBeUndefined();
    expect(sipUriParts("sip:user@[2001:db8:::192.0.2.1]")).toBeUndefined();
    expect(sipUriParts("sip:user@[2001:db8::192.0.2.1]")).toMatchObject({
      host: "[2001:db8::c000:201]",
    });
    // §4.3: the last group is part of the address, there is no port; §4.4: there is one.
    expect(sipUriParts("sip:[2001:db8::10:5070]")).toEqual({
      user: undefined,
      host: "[2001:db8::10:5070]",
      port: undefined,
    });
    expect(sipUriParts("sip:[2001:db8::10]:5070")).toEqual({
      user: undefined,
      host: "[2001:db8::10]",
      port: 5070,
    });
    // §4.9: an IPv4-mapped address is an IPv6 reference like any other.
    expect(parseSipUri("sip:[::ffff:192.0.2.10]:5060")).toMatchObject({
      address: "::ffff:c000:20a",
      port: 5060,
    });
    // Hosts compare as addresses (RFC 5954 §4): one canonical form.
    expect(sipUriParts("sip:alice@[2001:0DB8:0:0::0001]")?.host).toBe("[2001:db8::1]");
    expect(parseSipUri("sips:alice@[::1]:5061;transport=tls?subject=x")).toMatchObject({
      scheme: "sips",
      user: "alice",
      address: "::1",
      port: 5061,
      params: { transport: "tls" },
      headers: "subject=x",
    });
  });

  it("reads RFC 5118 §4.5's received, with and without brackets, and §4.7's Vias of both families", () => {
    const request = parseMessage(
      message([
        "BYE sip:[2001:db8::10] SIP/2.0",
        "To: sip:user@example.com;tag=bd76ya",
        "From: sip:user@example.com;tag=81x2",
        "Via: SIP/2.0/UDP [2001:db8::9:1];received=[2001:db8::9:255];branch=z9hG4bKas3-111",
        "Via: SIP/2.0/UDP [2001:db8::9:1]:6050;received=2001:db8::9:255;branch=z9hG4bKas3-222",
        "v: SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bKv4, SIP/2.0/TCP [::1]:5061 ;rport=5062;branch=z9hG4bKv6",
        "Call-ID: SSG9559905523997077@hlau_4100",
        "Max-Forwards: 70",
        "CSeq: 321 BYE",
      ]),
    ) as SipRequest;
    expect(request.headers.via).toEqual([
      {
        version: "2.0",
        protocol: "UDP",
        host: "[2001:db8::9:1]",
        params: { received: "[2001:db8::9:255]", branch: "z9hG4bKas3-111" },
      },
      {
        version: "2.0",
        protocol: "UDP",
        host: "[2001:db8::9:1]",
        port: 6050,
        params: { received: "2001:db8::9:255", branch: "z9hG4bKas3-222" },
      },
      {
        version: "2.0",
        protocol: "UDP",
        host: "192.0.2.1",
        port: 5060,
        params: { branch: "z9hG4bKv4" },
      },
      {
        version: "2.0",
        protocol: "TCP",
        host: "[::1]",
        port: 5061,
        params: { rport: "5062", branch: "z9hG4bKv6" },
      },
    ]);
  });

  it("drops a message whose Via names a bracketed host that is no IPv6 address, keeps a loose name", () => {
    const bad = ipv6Good.replace("[2001:db8::9:1]", "[2001:db8:::9:1]");
    expect(parseMessage(bad)).toBeUndefined();
    const loose = ipv6Good.replace("[2001:db8::9:1]", "pbx_1.example:5062");
    expect((parseMessage(loose) as SipRequest).headers.via[0]).toMatchObject({
      host: "pbx_1.example",
      port: 5062,
      params: { branch: "z9hG4bKas3-111" },
    });
  });

  it("writes a Via with an IPv6 sent-by and a bare received, and reads it back", () => {
    const request = parseMessage(ipv6Good) as SipRequest;
    request.headers.via[0]!.params.received = "2001:db8::9:1";
    const wire = serialize(request);
    expect(wire).toContain(
      "Via: SIP/2.0/UDP [2001:db8::9:1];branch=z9hG4bKas3-111;received=2001:db8::9:1\r\n",
    );
    expect((parseMessage(wire) as SipRequest).headers.via[0]!.params).toEqual({
      branch: "z9hG4bKas3-111",
      received: "2001:db8::9:1",
    });
  });

  it("reads Record-Route and Path entries with IPv6 hosts, and routes a phone through its Path's first", () => {
    const response = parseMessage(
      message([
        "SIP/2.0 200 OK",
        "Via: SIP/2.0/UDP [2001:db8::5]:5060;branch=z9hG4bKrr",
        "Record-Route: <sip:[2001:db8::7]:5070;lr>, <sip:edge.example.net;lr;transport=tcp>",
        "Record-Route: <sip:192.0.2.9;lr>",
        "To: <sip:+15550100001@[2001:db8::7]>;tag=t",
        "From: <sip:alice@[2001:db8::5]>;tag=f",
        "Call-ID: rr@[2001:db8::5]",
        "CSeq: 1 INVITE",
        "Contact: <sip:trunk@[2001:db8::7]:5070>",
      ]),
    ) as SipResponse;
    expect(recordRouteOf(response)).toEqual([
      "<sip:[2001:db8::7]:5070;lr>",
      "<sip:edge.example.net;lr;transport=tcp>",
      "<sip:192.0.2.9;lr>",
    ]);
    const path = ["<sip:[2001:db8::7]:5070;lr>"];
    const route = phoneRoute({
      transport: "udp",
      source_address: "2001:db8::99",
      source_port: 5090,
      path,
    } as Parameters<typeof phoneRoute>[0]);
    expect(route).toEqual({
      flow: { transport: "udp", address: "2001:db8::7", port: 5070 },
      routeSet: path,
    });
  });

  it("writes IPv6 hosts in brackets, with the port after them", () => {
    expect(sipHostPort("2001:db8::1", 5060)).toBe("[2001:db8::1]:5060");
    expect(sipHostPort("[2001:DB8::1]")).toBe("[2001:db8::1]");
    expect(sipHostPort("192.0.2.1", 5060)).toBe("192.0.2.1:5060");
    expect(sipHostPort("SIP.Example.net")).toBe("sip.example.net");
  });
});

describe("IPv6 in the SIP settings", () => {
  const base = { NODE_ENV: "test", VOICE_CARRIER: "sip" };
  const issues = (env: Record<string, string>) => {
    const parsed = callControlSettings.safeParse({ ...base, ...env });
    return parsed.success
      ? []
      : parsed.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`);
  };

  it("reads host:port with a bracketed IPv6 host, and says what is wrong with a malformed one", () => {
    expect(parseHostPort("[::]:5060")).toEqual({ host: "::", port: 5060 });
    expect(parseHostPort("[2001:DB8::1]")).toEqual({ host: "2001:db8::1", port: undefined });
    expect(parseHostPort("192.0.2.1:5060")).toEqual({ host: "192.0.2.1", port: 5060 });
    expect(parseHostPort("::1:5060")).toEqual({
      error: "an IPv6 address must be in brackets: [2001:db8::1]:5060",
    });
    expect(parseHostPort("[::g]:5060")).toEqual({ error: "[::g] is no IPv6 address" });
    expect(parseHostPort("[::1:5060")).toEqual({ error: "must be host[:port]" });
    expect(parseHostPort("300.1.1.1:5060")).toEqual({ error: "300.1.1.1 is no IPv4 address" });
  });

  it("listens on [::1], says Via and Contact in brackets, and takes the trunk's IPv6 address as allowed", () => {
    const parsed = callControlSettings.parse({
      ...base,
      SIP_LISTEN: "[::1]:5060",
      SIP_TRUNK_URI: "sip:[2001:DB8::7]:5070;transport=tcp, sip:192.0.2.10",
    });
    expect(parsed.sip.listen).toEqual({ host: "::1", port: 5060 });
    expect(parsed.sip.publicAddress).toEqual({ host: "::1", port: 5060 });
    expect(parsed.sip.domain).toBe("[::1]");
    expect(parsed.sip.trunk?.uris[0]).toEqual({
      scheme: "sip",
      host: "2001:db8::7",
      port: 5070,
      transport: "tcp",
    });
    expect(allowedSource(parsed.sip.trunkAllow, "2001:db8::7")).toBe(true);
    expect(allowedSource(parsed.sip.trunkAllow, "2001:db8::8")).toBe(false);
    expect(allowedSource(parsed.sip.trunkAllow, "192.0.2.10")).toBe(true);
  });

  it("listens on [::] with a public IPv6 address and an IPv6 domain", () => {
    const parsed = callControlSettings.parse({
      ...base,
      SIP_LISTEN: "[::]:5060",
      SIP_PUBLIC_ADDRESS: "[2001:db8::5]",
      SIP_DOMAIN: "[2001:DB8::5]",
      SIP_TRUNK_URI: "sip:trunk.example.net",
    });
    expect(parsed.sip.listen).toEqual({ host: "::", port: 5060 });
    expect(parsed.sip.publicAddress).toEqual({ host: "2001:db8::5", port: 5060 });
    expect(parsed.sip.domain).toBe("[2001:db8::5]");
  });

  it("refuses malformed IPv6 forms with a message naming the setting", () => {
    const trunk = { SIP_TRUNK_URI: "sip:192.0.2.10" };
    expect(issues({ ...trunk, SIP_LISTEN: "::1:5060" })).toEqual([
      "SIP_LISTEN: must be host:port: an IPv6 address must be in brackets: [2001:db8::1]:5060",
    ]);
    expect(issues({ ...trunk, SIP_LISTEN: "[::1]" })).toEqual([
      "SIP_LISTEN: must be host:port (e.g. 0.0.0.0:5060 or [::]:5060): the port is missing",
    ]);
    expect(issues({ ...trunk, SIP_LISTEN: "[::1]:70000" })).toEqual([
      "SIP_LISTEN: the port must be 0–65535",
    ]);
    expect(issues({ ...trunk, SIP_LISTEN: "[::]:5060" })).toEqual([
      "SIP_PUBLIC_ADDRESS: is required when SIP_LISTEN binds every interface (0.0.0.0 or [::])",
    ]);
    expect(
      issues({ ...trunk, SIP_LISTEN: "[::1]:5060", SIP_PUBLIC_ADDRESS: "[fe80::1%eth0]" }),
    ).toEqual(["SIP_PUBLIC_ADDRESS: must be host or host:port: [fe80::1%eth0] is no IPv6 address"]);
    expect(issues({ ...trunk, SIP_LISTEN: "[::1]:5060", SIP_DOMAIN: "2001:db8::5" })).toHaveLength(
      1,
    );
    expect(
      issues({ SIP_LISTEN: "[::1]:5060", SIP_TRUNK_URI: "sip:2001:db8::7:5060" }).map((i) =>
        i.slice(0, 31),
      ),
    ).toEqual(["SIP_TRUNK_URI: must be SIP URIs"]);
    expect(issues({ ...trunk, SIP_LISTEN: "[::1]:5060", SIP_RTP_RELAY: "[::1]:2223" })).toEqual([
      "SIP_RTP_RELAY: must name rtpengine by an IPv4 address or a name: its ng client speaks over IPv4 only (the media it anchors may be IPv6)",
    ]);
    expect(
      issues({ ...trunk, SIP_LISTEN: "[::1]:5060", SIP_TRUNK_ALLOW: "2001:db8::/129" }),
    ).toEqual(["SIP_TRUNK_ALLOW: must list IP addresses or CIDRs (a.b.c.d/n, 2001:db8::/n)"]);
  });

  it("reads IPv6 trunk URIs and writes their Request-URI with the brackets", () => {
    const uri = parseTrunkUri("sips:[2001:db8::7]")!;
    expect(uri).toEqual({ scheme: "sips", host: "2001:db8::7", port: undefined, transport: "tls" });
    expect(trunkRequestUri("+15550100001", uri)).toBe("sips:+15550100001@[2001:db8::7];user=phone");
    expect(trunkRequestUri("+1555", parseTrunkUri("sip:[::1]:5070;transport=tcp")!)).toBe(
      "sip:+1555@[::1]:5070;transport=tcp;user=phone",
    );
    for (const bad of ["sip:2001:db8::7", "sip:[2001:db8:::7]", "sip:[192.0.2.1]", "sip:[::1"]) {
      expect(parseTrunkUri(bad), bad).toBeUndefined();
    }
  });

  it("matches IPv6 sources against IPv6 blocks only, IPv4-mapped sources against IPv4 blocks", () => {
    const blocks = ["2001:db8:1::/48", "[2001:db8::9]", "192.0.2.0/24"].map((b) =>
      parseAddressBlock(b)!,
    );
    expect(allowedSource(blocks, "2001:db8:1:ffff::1")).toBe(true);
    expect(allowedSource(blocks, "2001:db8:2::1")).toBe(false);
    expect(allowedSource(blocks, "2001:db8::9")).toBe(true);
    expect(allowedSource(blocks, "2001:0db8:0000::9")).toBe(true);
    expect(allowedSource(blocks, "::ffff:192.0.2.7")).toBe(true);
    expect(allowedSource(blocks, "::c000:207")).toBe(false);
    expect(allowedSource([parseAddressBlock("::/0")!], "2001:db8::1")).toBe(true);
    expect(allowedSource([parseAddressBlock("::/0")!], "192.0.2.1")).toBe(false);
    for (const bad of ["2001:db8::/129", "2001:db8:::1", "[2001:db8::1", "2001:db8::1/x"]) {
      expect(parseAddressBlock(bad), bad).toBeUndefined();
    }
  });
});

describe("IPv6 media descriptions", () => {
  const offer6 = [
    "v=0",
    "o=phone 1 1 IN IP6 2001:db8::1",
    "s=-",
    "c=IN IP6 2001:db8::1",
    "t=0 0",
    "m=audio 40000 RTP/AVP 0",
    "a=rtpmap:0 PCMU/8000",
    "",
  ].join("\r\n");

  it("answers an IPv6 offer held or refused with IP6 ::, an IPv4 one with IP4 0.0.0.0", () => {
    expect(heldAnswer(offer6)).toContain("\r\nc=IN IP6 ::\r\n");
    expect(refusingAnswer(offer6)).toContain("\r\nc=IN IP6 ::\r\n");
    expect(heldAnswer(offer6.replaceAll("IP6 2001:db8::1", "IP4 192.0.2.1"))).toContain(
      "\r\nc=IN IP4 0.0.0.0\r\n",
    );
  });

  it("tells rtpengine the family of the address SIP came from", () => {
    expect(receivedFrom("2001:db8::1")).toEqual(["IP6", "2001:db8::1"]);
    expect(receivedFrom("192.0.2.1")).toEqual(["IP4", "192.0.2.1"]);
  });
});

describe("the SIP endpoint over IPv6 sockets", () => {
  let v6: SipEndpoint;
  let dual: SipEndpoint;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    v6 = await startSipEndpoint({ host: "::1", port: 0, logger, handlers: {} });
    dual = await startSipEndpoint({
      host: "::",
      port: 0,
      logger,
      handlers: {},
      publicAddress: { host: "2001:db8::5" },
    });
  });
  afterAll(async () => {
    for (const socket of sockets) socket.close();
    await Promise.all([v6?.stop(), dual?.stop()]);
  });

  const options = (sentBy: string) =>
    message([
      "OPTIONS sip:[::1] SIP/2.0",
      `Via: SIP/2.0/UDP ${sentBy};branch=z9hG4bKv6opts${Math.random().toString(36).slice(2)};rport`,
      "Max-Forwards: 70",
      "To: <sip:[::1]>",
      "From: <sip:probe@[::1]>;tag=p",
      "Call-ID: v6-options@[::1]",
      "CSeq: 1 OPTIONS",
    ]);

  /** Sends `text` from a socket of `family` bound to `address` to `port`; the one answer. */
  const ask = async (family: "udp4" | "udp6", address: string, to: string, port: number) => {
    const socket = createSocket(family);
    sockets.push(socket);
    await new Promise<void>((resolve) => socket.bind(0, address, () => resolve()));
    const answer = new Promise<string>((resolve) =>
      socket.once("message", (data) => resolve(data.toString("latin1"))),
    );
    const sentBy = sipHostPort(address, socket.address().port);
    socket.send(options(sentBy), port, to);
    return answer;
  };

  it("answers an OPTIONS from ::1 at its source, its Via stamped received=::1", async () => {
    const answer = await ask("udp6", "::1", "::1", v6.transport.port);
    expect(answer).toMatch(/^SIP\/2\.0 200 /);
    const via = /^Via: (.*)$/m.exec(answer)![1]!;
    expect(via).toMatch(/^SIP\/2\.0\/UDP \[::1\]:\d+;branch=\S+;rport=\d+;received=::1$/);
    expect(v6.publicAddress).toBe(`[::1]:${v6.transport.port}`);
  });

  it("on [::] takes an IPv4 peer as its IPv4 address and answers it", async () => {
    const answer = await ask("udp4", "127.0.0.1", "127.0.0.1", dual.transport.port);
    expect(answer).toMatch(/^SIP\/2\.0 200 /);
    expect(/^Via: (.*)$/m.exec(answer)![1]).toMatch(/;received=127\.0\.0\.1$/);
    expect(dual.sentBy("udp")).toBe(`[2001:db8::5]:${dual.transport.port}`);
  });

  it("sends no datagram from an IPv4 socket to an IPv6 peer", async () => {
    const v4 = await startSipEndpoint({ host: "127.0.0.1", port: 0, logger, handlers: {} });
    try {
      const request = parseMessage(options("[::1]:5999")) as SipRequest;
      expect(v4.transport.send(request, { transport: "udp", address: "::1", port: 5999 })).toBe(
        false,
      );
    } finally {
      await v4.stop();
    }
  });

  it("listens for TLS on the IPv6 host and answers over it, its Via stamped received=::1", async () => {
    const certificate = selfSignedCertificate();
    const tls = await startSipEndpoint({
      host: "::1",
      port: 0,
      logger,
      handlers: {},
      tls: { listen: { port: 0, cert: certificate.cert, key: certificate.key } },
    });
    try {
      expect(tls.sentBy("tls")).toBe(`[::1]:${tls.transport.tlsPort}`);
      const socket = connectTls({
        host: "::1",
        port: tls.transport.tlsPort!,
        servername: "localhost",
        ca: certificate.cert,
      });
      await new Promise<void>((resolve, reject) => {
        socket.once("secureConnect", () => resolve());
        socket.once("error", reject);
      });
      const answer = new Promise<string>((resolve) =>
        socket.once("data", (data: Buffer) => resolve(data.toString("latin1"))),
      );
      socket.write(options("[::1]:9").replace("SIP/2.0/UDP", "SIP/2.0/TLS"));
      const text = await answer;
      socket.destroy();
      expect(text).toMatch(/^SIP\/2\.0 200 /);
      expect(/^Via: (.*)$/m.exec(text)![1]).toMatch(
        /^SIP\/2\.0\/TLS \[::1\]:9;branch=\S+;rport=\d+;received=::1$/,
      );
    } finally {
      await tls.stop();
      certificate.remove();
    }
  });
});
