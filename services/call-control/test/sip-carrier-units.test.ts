import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hangupForFailure, hangupForStatus } from "../src/carrier/sip/sip-causes.js";
import { callControlSettings } from "../src/config.js";
import { answerChallenge } from "../src/sip/stack/digest.js";
import { heldAnswer, offersSecureMedia, refusingAnswer } from "../src/sip/stack/sdp.js";
import { contactUri } from "../src/carrier/sip/sip-carrier.js";
import { trunkRequestUri } from "../src/sip/trunk-uris.js";

const md5 = (text: string) => createHash("md5").update(text).digest("hex");
const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

describe("the sip carrier's mapping of final responses (docs/api.md)", () => {
  it("maps each trunk status to its cause, keeping the code", () => {
    const causes = Object.fromEntries(
      [486, 600, 408, 480, 487, 403, 404, 484, 603, 400, 488, 500, 503, 604].map((status) => [
        status,
        hangupForStatus(status, "callee").cause,
      ]),
    );
    expect(causes).toEqual({
      486: "user_busy",
      600: "user_busy",
      408: "no_answer",
      480: "no_answer",
      487: "no_answer",
      403: "call_rejected",
      404: "call_rejected",
      484: "call_rejected",
      603: "call_rejected",
      400: "network_error",
      488: "network_error",
      500: "network_error",
      503: "network_error",
      604: "network_error",
    });
    expect(hangupForStatus(486, "caller")).toEqual({
      cause: "user_busy",
      source: "caller",
      sipCode: 486,
    });
  });

  it("counts Timer B as a local 408 and a send failure as the platform's network error", () => {
    expect(hangupForFailure("timeout", "callee")).toEqual({
      cause: "no_answer",
      source: "callee",
      sipCode: 408,
    });
    expect(hangupForFailure("transport", "callee")).toEqual({
      cause: "network_error",
      source: "platform",
      sipCode: 503,
    });
  });
});

describe("digest credentials for the trunk (the client side)", () => {
  const input = { username: "u", password: "p", method: "INVITE", uri: "sip:+1@trunk" };

  it("answers an MD5 challenge without qop (RFC 2617 compatibility) and keeps the opaque", () => {
    const answer = answerChallenge(
      [{ scheme: "Digest", realm: '"r"', nonce: '"n"', opaque: '"o"' }],
      input,
    )!;
    const expected = md5(`${md5("u:r:p")}:n:${md5("INVITE:sip:+1@trunk")}`);
    expect(answer).toEqual({
      scheme: "Digest",
      username: '"u"',
      realm: '"r"',
      nonce: '"n"',
      uri: '"sip:+1@trunk"',
      response: `"${expected}"`,
      algorithm: "MD5",
      opaque: '"o"',
    });
  });

  it("prefers SHA-256 and qop=auth when offered", () => {
    const answer = answerChallenge(
      [
        { scheme: "Digest", realm: '"r"', nonce: '"n1"', algorithm: "MD5", qop: '"auth"' },
        {
          scheme: "Digest",
          realm: '"r"',
          nonce: '"n2"',
          algorithm: "SHA-256",
          qop: '"auth,auth-int"',
        },
      ],
      input,
    )!;
    expect(answer).toMatchObject({
      algorithm: "SHA-256",
      nonce: '"n2"',
      qop: "auth",
      nc: "00000001",
    });
    const cnonce = answer.cnonce!.slice(1, -1);
    const ha2 = sha256("INVITE:sip:+1@trunk");
    expect(answer.response).toBe(
      `"${sha256(`${sha256("u:r:p")}:n2:00000001:${cnonce}:auth:${ha2}`)}"`,
    );
  });

  it("answers nothing it cannot: another scheme, an unknown algorithm, no nonce", () => {
    expect(answerChallenge([{ scheme: "Basic", realm: '"r"' }], input)).toBeUndefined();
    expect(
      answerChallenge(
        [{ scheme: "Digest", realm: '"r"', nonce: '"n"', algorithm: "SHA-512" }],
        input,
      ),
    ).toBeUndefined();
    expect(answerChallenge([{ scheme: "Digest", realm: '"r"' }], input)).toBeUndefined();
  });
});

describe("the refusing SDP answer", () => {
  it("refuses every stream of the offer with port 0", () => {
    const offer = [
      "v=0",
      "o=- 1 1 IN IP4 192.0.2.2",
      "s=-",
      "c=IN IP4 192.0.2.2",
      "t=0 0",
      "m=audio 14592 RTP/AVP 0 8 101",
      "a=rtpmap:0 PCMU/8000",
      "m=video 14594 RTP/AVP 96",
      "",
    ].join("\r\n");
    const answer = refusingAnswer(offer);
    expect(answer.split("\r\n").filter((line) => line.startsWith("m="))).toEqual([
      "m=audio 0 RTP/AVP 0",
      "m=video 0 RTP/AVP 96",
    ]);
    expect(answer).toMatch(/^v=0\r\no=switchboard /);
  });
});

describe("SRTP in the SDP the carrier writes (RFC 4568)", () => {
  const savp = [
    "v=0",
    "o=- 1 1 IN IP4 192.0.2.2",
    "s=-",
    "c=IN IP4 192.0.2.2",
    "t=0 0",
    "m=audio 14592 RTP/SAVP 0 8",
    "a=rtpmap:0 PCMU/8000",
    "a=crypto:7 FOO_UNKNOWN inline:AAAA",
    "a=crypto:8 AES_256_CM_HMAC_SHA1_80 inline:d0RmdmcmVCspeEc3QGZiNWpVLFJhQX1cfHAwJSoj",
    "a=crypto:9 AES_CM_128_HMAC_SHA1_80 inline:d0RmdmcmVCspeEc3QGZiNWpVLFJhQX1cfHAwJSoj",
    "m=video 0 RTP/SAVP 96",
    "",
  ].join("\r\n");

  it("tells an SRTP offer (RTP/SAVP, RTP/SAVPF, a live stream) from a plain one", () => {
    expect(offersSecureMedia(savp)).toBe(true);
    expect(offersSecureMedia(savp.replaceAll("RTP/SAVP", "RTP/AVP"))).toBe(false);
    expect(offersSecureMedia("m=audio 4000 UDP/TLS/RTP/SAVPF 111")).toBe(true);
    expect(offersSecureMedia("m=audio 0 RTP/SAVP 0")).toBe(false);
  });

  it("answers a held SRTP stream with a key of its own for the first suite it knows, a refused stream without", () => {
    const answer = heldAnswer(savp);
    const lines = answer.split("\r\n");
    expect(lines.filter((line) => line.startsWith("m="))).toEqual([
      "m=audio 9 RTP/SAVP 0 8",
      "m=video 0 RTP/SAVP 96",
    ]);
    const crypto = lines.filter((line) => line.startsWith("a=crypto:"));
    expect(crypto).toHaveLength(1);
    const [, tag, suite, key] = /^a=crypto:(\d+) (\S+) inline:(\S+)$/.exec(crypto[0]!)!;
    expect([tag, suite]).toEqual(["8", "AES_256_CM_HMAC_SHA1_80"]);
    expect(Buffer.from(key!, "base64")).toHaveLength(46);
    expect(answer).not.toContain("d0RmdmcmVCspeEc3QGZiNWpVLFJhQX1cfHAwJSoj");
    // A plain RTP offer's held answer has no key.
    expect(heldAnswer(savp.replaceAll("RTP/SAVP", "RTP/AVP"))).not.toContain("a=crypto");
  });

  it("names the transport in our Contact", () => {
    expect(contactUri("192.0.2.9:5060", "udp")).toBe("sip:switchboard@192.0.2.9:5060");
    expect(contactUri("192.0.2.9:5060", "tcp")).toBe(
      "sip:switchboard@192.0.2.9:5060;transport=tcp",
    );
    expect(contactUri("192.0.2.9:5061", "tls")).toBe(
      "sip:switchboard@192.0.2.9:5061;transport=tls",
    );
  });
});

describe("the sip carrier's settings", () => {
  const base = { NODE_ENV: "test", VOICE_CARRIER: "sip" };
  const issues = (env: Record<string, string>) => {
    const parsed = callControlSettings.safeParse(env);
    return parsed.success
      ? []
      : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  };

  it("needs a listener and a trunk", () => {
    expect(issues(base)).toEqual([
      "SIP_LISTEN: is required with the sip carrier",
      "SIP_TRUNK_URI: is required with the sip carrier",
    ]);
  });

  it("reads the trunk's address and credentials", () => {
    const parsed = callControlSettings.parse({
      ...base,
      SIP_LISTEN: "127.0.0.1:5060",
      SIP_TRUNK_URI: "sip:Trunk.Example.net;transport=udp",
      SIP_TRUNK_USERNAME: "acme",
      SIP_TRUNK_PASSWORD: "secret",
    });
    expect(parsed.carrier).toBe("sip");
    expect(parsed.sip.trunk).toMatchObject({
      uris: [{ scheme: "sip", host: "trunk.example.net", port: undefined, transport: "udp" }],
      username: "acme",
      password: "secret",
    });
  });

  it("takes trunk URIs over TCP or TLS (sips: or transport=tls), each its own transport", () => {
    const trunkOf = (uri: string) =>
      callControlSettings.parse({ ...base, SIP_LISTEN: "127.0.0.1:5060", SIP_TRUNK_URI: uri }).sip
        .trunk;
    expect(
      trunkOf(
        "sip:trunk.example.net:5070;transport=tcp, sips:trunk.example.net, sip:10.0.0.9;transport=TLS",
      )?.uris,
    ).toEqual([
      { scheme: "sip", transport: "tcp", host: "trunk.example.net", port: 5070 },
      { scheme: "sips", transport: "tls", host: "trunk.example.net", port: undefined },
      { scheme: "sip", transport: "tls", host: "10.0.0.9", port: undefined },
    ]);
    const [tcp, sips, tls] = trunkOf(
      "sip:trunk.example.net:5070;transport=tcp, sips:trunk.example.net, sip:10.0.0.9;transport=TLS",
    )!.uris;
    expect(trunkRequestUri("+15550100", tcp!)).toBe(
      "sip:+15550100@trunk.example.net:5070;transport=tcp;user=phone",
    );
    expect(trunkRequestUri("+15550100", sips!)).toBe("sips:+15550100@trunk.example.net;user=phone");
    expect(trunkRequestUri("+15550100", tls!)).toBe(
      "sip:+15550100@10.0.0.9;transport=tls;user=phone",
    );
  });

  it("needs the certificate and key with a TLS listener, as files read at start", () => {
    const listening = { ...base, SIP_LISTEN: "127.0.0.1:5060", SIP_TRUNK_URI: "sip:trunk" };
    expect(issues({ ...listening, SIP_TLS_PORT: "5061" })).toEqual([
      "SIP_TLS_CERT_FILE: is required with SIP_TLS_PORT",
      "SIP_TLS_KEY_FILE: is required with SIP_TLS_PORT",
    ]);
    const parsed = callControlSettings.parse({
      ...listening,
      SIP_TLS_PORT: "5061",
      SIP_TLS_CERT_FILE: "/etc/sip/tls.crt",
      SIP_TLS_KEY_FILE: "/etc/sip/tls.key",
    });
    expect(parsed.sip.tls).toEqual({
      port: 5061,
      certFile: "/etc/sip/tls.crt",
      keyFile: "/etc/sip/tls.key",
      caFile: undefined,
    });
  });

  it("refuses a trunk it cannot reach and credentials that do not pair", () => {
    const listening = { ...base, SIP_LISTEN: "127.0.0.1:5060" };
    expect(issues({ ...listening, SIP_TRUNK_URI: "sip:trunk:5060;transport=sctp" })).toEqual([
      "SIP_TRUNK_URI: transport must be udp, tcp or tls (sips: is tls)",
    ]);
    expect(issues({ ...listening, SIP_TRUNK_URI: "sips:trunk;transport=udp" })).toEqual([
      "SIP_TRUNK_URI: transport must be udp, tcp or tls (sips: is tls)",
    ]);
    expect(issues({ ...listening, SIP_TRUNK_URI: "http://trunk" })).toEqual([
      "SIP_TRUNK_URI: must be SIP URIs: sip:host[:port][;transport=udp|tcp|tls] or sips:host[:port], comma-separated (an IPv6 host in brackets: sip:[2001:db8::1]:5060)",
    ]);
    expect(
      issues({ ...listening, SIP_TRUNK_URI: "sip:trunk:5060", SIP_TRUNK_USERNAME: "acme" }),
    ).toEqual(["SIP_TRUNK_PASSWORD: SIP_TRUNK_USERNAME and SIP_TRUNK_PASSWORD go together"]);
  });

  it("keeps the sandbox the default, with no trunk", () => {
    const parsed = callControlSettings.parse({ NODE_ENV: "test" });
    expect(parsed.carrier).toBe("sandbox");
    expect(parsed.sip.trunk).toBeUndefined();
  });
});
