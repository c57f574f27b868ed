import { describe, expect, it } from "vitest";
import {
  digestChallenge,
  digestHa1,
  digestResponse,
  parseCredentials,
  sameDigest,
} from "../src/sip/stack/digest.js";
import { responseFlow } from "../src/sip/stack/endpoint.js";
import {
  bodyCutShort,
  parseMessage,
  responseTo,
  serialize,
  sipUriParts,
  unquote,
  type SipRequest,
  type SipResponse,
} from "../src/sip/stack/message.js";
import { NonceIssuer } from "../src/sip/registrar/nonce.js";
import { contactChanges, SipRefusal } from "../src/sip/registrar/registrar.js";

/** A message as RFCs print it: one line each, CRLF between, folded lines kept. */
const wire = (...lines: string[]) => lines.join("\r\n");

// RFC 3261 §24.1 (registration): F1, F2 and F4 as printed, F3's credentials.
const registerF1 = wire(
  "REGISTER sips:ss2.biloxi.example.com SIP/2.0",
  "Via: SIP/2.0/TLS client.biloxi.example.com:5061;branch=z9hG4bKnashds7",
  "Max-Forwards: 70",
  "From: Bob <sips:bob@biloxi.example.com>;tag=a73kszlfl",
  "To: Bob <sips:bob@biloxi.example.com>",
  "Call-ID: 1j9FpLxk3uxtm8tn@biloxi.example.com",
  "CSeq: 1 REGISTER",
  "Contact: <sips:bob@client.biloxi.example.com>",
  "Content-Length: 0",
  "",
  "",
);
const unauthorizedF2 = wire(
  "SIP/2.0 401 Unauthorized",
  "Via: SIP/2.0/TLS client.biloxi.example.com:5061;branch=z9hG4bKnashds7",
  " ;received=192.0.2.201",
  "From: Bob <sips:bob@biloxi.example.com>;tag=a73kszlfl",
  "To: Bob <sips:bob@biloxi.example.com>;tag=1410948204",
  "Call-ID: 1j9FpLxk3uxtm8tn@biloxi.example.com",
  "CSeq: 1 REGISTER",
  'WWW-Authenticate: Digest realm="atlanta.example.com", qop="auth",',
  ' nonce="ea9c8e88df84f1cec4341ae6cbe5a359",',
  ' opaque="", stale=FALSE, algorithm=MD5',
  "Content-Length: 0",
  "",
  "",
);
const registerF3 = wire(
  "REGISTER sips:ss2.biloxi.example.com SIP/2.0",
  "Via: SIP/2.0/TLS client.biloxi.example.com:5061;branch=z9hG4bKnashd92",
  "Max-Forwards: 70",
  "From: Bob <sips:bob@biloxi.example.com>;tag=ja743ks76zlflH",
  "To: Bob <sips:bob@biloxi.example.com>",
  "Call-ID: 1j9FpLxk3uxtm8tn@biloxi.example.com",
  "CSeq: 2 REGISTER",
  "Contact: <sips:bob@client.biloxi.example.com>",
  'Authorization: Digest username="bob", realm="atlanta.example.com",',
  ' nonce="ea9c8e88df84f1cec4341ae6cbe5a359", opaque="",',
  ' uri="sips:ss2.biloxi.example.com",',
  ' response="dfe56131d1958046689d83306477ecc"',
  "Content-Length: 0",
  "",
  "",
);
const okF4 = wire(
  "SIP/2.0 200 OK",
  "Via: SIP/2.0/TLS client.biloxi.example.com:5061;branch=z9hG4bKnashd92",
  " ;received=192.0.2.201",
  "From: Bob <sips:bob@biloxi.example.com>;tag=ja743ks76zlflH",
  "To: Bob <sips:bob@biloxi.example.com>;tag=37GkEhwl6",
  "Call-ID: 1j9FpLxk3uxtm8tn@biloxi.example.com",
  "CSeq: 2 REGISTER",
  "Contact: <sips:bob@client.biloxi.example.com>;expires=3600",
  "Content-Length: 0",
  "",
  "",
);

// RFC 3261 §24.2 (session setup), F1: an INVITE with an SDP body.
const sdp = wire(
  "v=0",
  "o=alice 2890844526 2890844526 IN IP4 client.atlanta.example.com",
  "s=-",
  "c=IN IP4 192.0.2.101",
  "t=0 0",
  "m=audio 49172 RTP/AVP 0",
  "a=rtpmap:0 PCMU/8000",
  "",
);
const inviteF1 = wire(
  "INVITE sips:bob@biloxi.example.com SIP/2.0",
  "Via: SIP/2.0/TLS client.atlanta.example.com:5061;branch=z9hG4bK74bf9",
  "Max-Forwards: 70",
  "From: Alice <sips:alice@atlanta.example.com>;tag=9fxced76sl",
  "To: Bob <sips:bob@biloxi.example.com>",
  "Call-ID: 3848276298220188511@atlanta.example.com",
  "CSeq: 1 INVITE",
  "Contact: <sips:alice@client.atlanta.example.com;transport=tcp>",
  "Content-Type: application/sdp",
  `Content-Length: ${Buffer.byteLength(sdp)}`,
  "",
  sdp,
);

const request = (text: string) => parseMessage(text) as SipRequest;

describe("SIP messages (RFC 3261 §24 examples)", () => {
  it("parses a REGISTER: start line, Via, name-addrs, Call-ID, CSeq, Contact", () => {
    const m = request(registerF1);
    expect(m).toMatchObject({ method: "REGISTER", uri: "sips:ss2.biloxi.example.com" });
    expect(m.headers.via[0]).toMatchObject({
      protocol: "TLS",
      host: "client.biloxi.example.com",
      port: 5061,
      params: { branch: "z9hG4bKnashds7" },
    });
    expect(m.headers.from).toMatchObject({
      uri: "sips:bob@biloxi.example.com",
      params: { tag: "a73kszlfl" },
    });
    expect(m.headers.to.params.tag).toBeUndefined();
    expect(m.headers["call-id"]).toBe("1j9FpLxk3uxtm8tn@biloxi.example.com");
    expect(m.headers.cseq).toEqual({ seq: 1, method: "REGISTER" });
    expect(m.headers.contact).toEqual([
      { name: undefined, uri: "sips:bob@client.biloxi.example.com", params: {} },
    ]);
    expect(sipUriParts(m.headers.to.uri)).toEqual({
      user: "bob",
      host: "biloxi.example.com",
      port: undefined,
    });
  });

  it("parses folded header lines: a 401 challenge and the credentials answering it", () => {
    const challenge = parseMessage(unauthorizedF2) as SipResponse;
    expect(challenge).toMatchObject({ status: 401, reason: "Unauthorized" });
    expect(challenge.headers.via[0]!.params.received).toBe("192.0.2.201");
    expect(challenge.headers["www-authenticate"]).toHaveLength(1);
    const offered = challenge.headers["www-authenticate"]![0]!;
    expect(unquote(offered.nonce)).toBe("ea9c8e88df84f1cec4341ae6cbe5a359");
    expect(offered.algorithm).toBe("MD5");

    const answer = request(registerF3);
    expect(answer.headers.cseq.seq).toBe(2);
    expect(parseCredentials(answer.headers.authorization![0]!)).toEqual({
      username: "bob",
      realm: "atlanta.example.com",
      nonce: "ea9c8e88df84f1cec4341ae6cbe5a359",
      uri: "sips:ss2.biloxi.example.com",
      response: "dfe56131d1958046689d83306477ecc",
      algorithm: "MD5",
      qop: undefined,
      nc: undefined,
      cnonce: undefined,
      opaque: "",
    });
  });

  it("parses a 200 to REGISTER with the contact's expires parameter", () => {
    const ok = parseMessage(okF4) as SipResponse;
    expect(ok.status).toBe(200);
    expect(ok.headers.to.params.tag).toBe("37GkEhwl6");
    expect(ok.headers.contact).toEqual([
      { name: undefined, uri: "sips:bob@client.biloxi.example.com", params: { expires: "3600" } },
    ]);
  });

  it("parses an INVITE with its body, and writes it back with the same Content-Length", () => {
    const invite = request(inviteF1);
    expect(invite.method).toBe("INVITE");
    expect(invite.content).toBe(sdp);
    expect(invite.headers["content-type"]).toBe("application/sdp");
    const again = request(serialize(invite));
    expect(again.content).toBe(sdp);
    expect(again.headers["content-length"]).toBe(Buffer.byteLength(sdp));
  });

  it("knows a datagram whose Content-Length runs past it (RFC 3261 §18.3)", () => {
    const whole = Buffer.from(inviteF1, "binary");
    expect(bodyCutShort(whole, request(inviteF1))).toBe(false);
    const longer = inviteF1.replace(/Content-Length: \d+/, "Content-Length: 600");
    expect(bodyCutShort(Buffer.from(longer, "binary"), request(longer))).toBe(true);
    const garbled = inviteF1.replace(/Content-Length: \d+/, "Content-Length: many");
    expect(bodyCutShort(Buffer.from(garbled, "binary"), request(garbled))).toBe(true);
  });

  it("reads compact header names (RFC 3261 §7.3.3)", () => {
    const compact = request(
      wire(
        "OPTIONS sip:carol@chicago.com SIP/2.0",
        "v: SIP/2.0/UDP pc33.atlanta.com;branch=z9hG4bKhjhs8ass877",
        "f: <sip:alice@atlanta.com>;tag=1928301774",
        "t: <sip:carol@chicago.com>",
        "i: a84b4c76e66710",
        "CSeq: 63104 OPTIONS",
        "m: <sip:alice@pc33.atlanta.com>",
        "l: 0",
        "",
        "",
      ),
    );
    expect(compact.headers["call-id"]).toBe("a84b4c76e66710");
    expect(compact.headers.via[0]!.host).toBe("pc33.atlanta.com");
    expect(compact.headers.contact).toHaveLength(1);
  });

  it("refuses what is not a usable message", () => {
    expect(parseMessage("hello\r\n\r\n")).toBeUndefined();
    expect(
      parseMessage(registerF1.replace("Call-ID: 1j9FpLxk3uxtm8tn@biloxi.example.com\r\n", "")),
    ).toBeUndefined();
    expect(parseMessage(registerF1.replace("CSeq: 1 REGISTER", "CSeq: 1 INVITE"))).toBeUndefined();
    expect(parseMessage(registerF1.replace(/Via: [^\r]*\r\n/, ""))).toBeUndefined();
    expect(parseMessage("x".repeat(20_000))).toBeUndefined();
  });

  it("answers with the request's headers and a To tag, leaving the request as it was", () => {
    const register = request(registerF1);
    const response = responseTo(register, 423, { "min-expires": "60" });
    const back = parseMessage(serialize(response)) as SipResponse;
    expect(back).toMatchObject({ status: 423, reason: "Interval Too Brief" });
    expect(back.headers["min-expires"]).toBe("60");
    expect(back.headers.to.params.tag).toMatch(/^[0-9a-f]{16}$/);
    expect(register.headers.to.params.tag).toBeUndefined();
    expect(back.headers.via[0]!.params.branch).toBe("z9hG4bKnashds7");
    expect(back.headers.cseq).toEqual({ seq: 1, method: "REGISTER" });
  });

  it("unquotes quoted-strings with escapes", () => {
    expect(unquote('"a\\"b\\\\c"')).toBe('a"b\\c');
    expect(unquote("token")).toBe("token");
    expect(unquote('"open')).toBeUndefined();
  });
});

describe("digest authentication", () => {
  it("computes RFC 2617 §3.5's response (MD5, qop=auth)", () => {
    const ha1 = digestHa1("MD5", "Mufasa", "testrealm@host.com", "Circle Of Life");
    expect(
      digestResponse({
        algorithm: "MD5",
        ha1,
        nonce: "dcd98b7102dd2f0e8b11d0f600bfb0c093",
        method: "GET",
        uri: "/dir/index.html",
        qop: "auth",
        nc: "00000001",
        cnonce: "0a4f113b",
      }),
    ).toBe("6629fae49393a05397450978507c4ef1");
  });

  it("computes RFC 7616 §3.9.1's responses (SHA-256 and MD5)", () => {
    const common = {
      nonce: "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v",
      method: "GET",
      uri: "/dir/index.html",
      qop: "auth",
      nc: "00000001",
      cnonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ",
    };
    const realm = "http-auth@example.org";
    expect(
      digestResponse({
        ...common,
        algorithm: "SHA-256",
        ha1: digestHa1("SHA-256", "Mufasa", realm, "Circle of Life"),
      }),
    ).toBe("753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1");
    expect(
      digestResponse({
        ...common,
        algorithm: "MD5",
        ha1: digestHa1("MD5", "Mufasa", realm, "Circle of Life"),
      }),
    ).toBe("8ca523f5e9506fed4657c9700eebdbec");
  });

  it("reads RFC 7616 §3.9.1's Authorization header", () => {
    const credentials = parseCredentials({
      scheme: "Digest",
      username: '"Mufasa"',
      realm: '"http-auth@example.org"',
      uri: '"/dir/index.html"',
      algorithm: "SHA-256",
      nonce: '"7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v"',
      nc: "00000001",
      cnonce: '"f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ"',
      qop: "auth",
      response: '"753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"',
      opaque: '"FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS"',
    });
    expect(credentials).toMatchObject({
      username: "Mufasa",
      algorithm: "SHA-256",
      qop: "auth",
      nc: "00000001",
    });
    expect(parseCredentials({ scheme: "Basic", realm: '"x"' })).toBeUndefined();
    expect(parseCredentials({ scheme: "Digest", username: '"a"' })).toBeUndefined();
  });

  it("compares digests in constant time, case-insensitively, unequal lengths unequal", () => {
    expect(sameDigest("ABCdef", "abcDEF")).toBe(true);
    expect(sameDigest("abcdef", "abcdee")).toBe(false);
    expect(sameDigest("abcdef", "abcde")).toBe(false);
  });

  it("writes a challenge whose quoted values parse back", () => {
    const header = digestChallenge({
      realm: 'we"ird',
      nonce: "n0nce",
      algorithm: "SHA-256",
      stale: true,
    });
    expect(header).toEqual({
      scheme: "Digest",
      realm: '"we\\"ird"',
      nonce: '"n0nce"',
      algorithm: "SHA-256",
      qop: '"auth"',
      stale: "true",
    });
    expect(unquote(header.realm)).toBe('we"ird');
  });
});

describe("stateless nonces", () => {
  const key = Buffer.alloc(32, 7);

  it("verifies its own nonces, goes stale after the lifetime, refuses forgeries", () => {
    let now = 1_700_000_000_000;
    const issuer = new NonceIssuer(key, 300_000, () => now);
    const nonce = issuer.issue();
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{41,42}$/);
    expect(issuer.check(nonce)).toBe("valid");
    now += 300_001;
    expect(issuer.check(nonce)).toBe("stale");
    expect(new NonceIssuer(Buffer.alloc(32, 8), 300_000, () => now).check(nonce)).toBe("invalid");
    const tampered = nonce.slice(0, 3) + (nonce[3] === "A" ? "B" : "A") + nonce.slice(4);
    expect(issuer.check(tampered)).toBe("invalid");
    expect(issuer.check("ea9c8e88df84f1cec4341ae6cbe5a359")).toBe("invalid");
    expect(issuer.check("")).toBe("invalid");
  });

  it("refuses a nonce from further in the future than clock skew explains", () => {
    let now = 1_700_000_000_000;
    const issuer = new NonceIssuer(key, 300_000, () => now);
    const nonce = issuer.issue();
    now -= 20_000;
    expect(issuer.check(nonce)).toBe("valid");
    now -= 20_000;
    expect(issuer.check(nonce)).toBe("invalid");
  });
});

describe("the registrar's reading of a REGISTER (RFC 3261 §10.3)", () => {
  const limits = { minExpires: 60, maxExpires: 3600, defaultExpires: 1800 };
  const register = (...headers: string[]) =>
    request(
      wire(
        "REGISTER sip:example.com SIP/2.0",
        "Via: SIP/2.0/UDP 192.0.2.4:5060;branch=z9hG4bK776asdhds;rport",
        "From: <sip:seat@example.com>;tag=1",
        "To: <sip:seat@example.com>",
        "Call-ID: c1",
        "CSeq: 7 REGISTER",
        ...headers,
        "Content-Length: 0",
        "",
        "",
      ),
    );

  it("takes each contact's expires parameter, else the Expires header, else the default", () => {
    expect(
      contactChanges(
        register("Contact: <sip:a@192.0.2.4>;expires=120, <sip:b@192.0.2.4>", "Expires: 300"),
        limits,
      ),
    ).toEqual([
      { uri: "sip:a@192.0.2.4", expires: 120 },
      { uri: "sip:b@192.0.2.4", expires: 300 },
    ]);
    expect(contactChanges(register("Contact: <sip:a@192.0.2.4>"), limits)).toEqual([
      { uri: "sip:a@192.0.2.4", expires: 1800 },
    ]);
    expect(contactChanges(register("Expires: 300"), limits)).toEqual([]);
  });

  it("refuses too brief an interval with 423 and Min-Expires, cuts down too long a one", () => {
    const brief = contactChanges(register("Contact: <sip:a@192.0.2.4>;expires=30"), limits);
    expect(brief).toBeInstanceOf(SipRefusal);
    expect(brief).toMatchObject({ status: 423, headers: { "min-expires": "60" } });
    expect(contactChanges(register("Contact: <sip:a@192.0.2.4>", "Expires: 0"), limits)).toEqual([
      { uri: "sip:a@192.0.2.4", expires: 0 },
    ]);
    expect(
      contactChanges(register("Contact: <sip:a@192.0.2.4>", "Expires: 99999999999"), limits),
    ).toEqual([{ uri: "sip:a@192.0.2.4", expires: 3600 }]);
  });

  it("takes `Contact: *` only alone and with Expires: 0", () => {
    expect(contactChanges(register("Contact: *", "Expires: 0"), limits)).toBe("all");
    expect(contactChanges(register("Contact: *", "Expires: 60"), limits)).toMatchObject({
      status: 400,
    });
    expect(contactChanges(register("Contact: *"), limits)).toMatchObject({ status: 400 });
    expect(
      contactChanges(register("Contact: *, <sip:a@192.0.2.4>", "Expires: 0"), limits),
    ).toMatchObject({ status: 400 });
  });

  it("refuses a contact that is not a SIP URI", () => {
    expect(contactChanges(register("Contact: <tel:+15550100>"), limits)).toMatchObject({
      status: 400,
    });
  });

  it("answers UDP to received:rport, or to the Via's port without rport; TCP on its connection", () => {
    const udp = { transport: "udp" as const, address: "203.0.113.9", port: 40000 };
    const withRport = register();
    withRport.headers.via[0]!.params.received = "203.0.113.9";
    withRport.headers.via[0]!.params.rport = "40000";
    expect(responseFlow(withRport, udp)).toEqual(udp);
    const without = request(registerF1);
    without.headers.via[0]!.params.received = "203.0.113.9";
    expect(responseFlow(without, udp)).toEqual({ ...udp, port: 5061 });
    const tcp = { transport: "tcp" as const, address: "203.0.113.9", port: 40001 };
    expect(responseFlow(without, tcp)).toBe(tcp);
  });
});
