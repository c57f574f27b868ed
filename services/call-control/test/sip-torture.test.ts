import { describe, expect, it } from "vitest";
import {
  bodyCutShort,
  checkMessage,
  parseMessage,
  type SipRequest,
} from "../src/sip/stack/message.js";

/**
 * The parser against the kinds of message RFC 4475 ("SIP Torture Test Messages") lists, each
 * written here in the shape of its case: what the `sip` package (the codec) and
 * `stack/message.ts` (the checks) make of it, and where RFC 4475 says what a UAS must do, that.
 * A datagram whose declared body runs past it is answered 400 by the transport
 * (`bodyCutShort`); a message `parseMessage` refuses is dropped.
 */
const wire = (...lines: string[]) => lines.join("\r\n");
const sdp = wire("v=0", "o=torture 1 1 IN IP4 192.0.2.1", "s=-", "c=IN IP4 192.0.2.1", "t=0 0", "");

const headers = (method: string, extra: string[] = []) => [
  "Via: SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bKtorture1",
  "Max-Forwards: 70",
  "From: <sip:caller@example.com>;tag=torture",
  "To: <sip:callee@example.net>",
  "Call-ID: torture.1@192.0.2.1",
  `CSeq: 1 ${method}`,
  ...extra,
];
const datagram = (text: string) => Buffer.from(text, "binary");

describe("RFC 4475 §3.1.1: valid messages the codec must take", () => {
  it("a tortuous INVITE: folded lines, LWS around colons, odd case, compact and long forms, leading zeros, unknown headers", () => {
    const text = wire(
      "INVITE sip:callee@example.net;unknownparam SIP/2.0",
      "TO :",
      " sip:callee@example.net ;   tag    = 1918181833n",
      'from   : "Caller \\\\\\"Q\\"" <sip:caller@example.com>',
      "  ;",
      "  tag = 98asjd8",
      "MaX-fOrWaRdS: 0068",
      "Call-ID: wsinv.torture@192.0.2.1",
      `Content-Length   : ${sdp.length}`,
      "cseq: 0009",
      "  INVITE",
      "Via  : SIP/2.0/UDP",
      "    192.0.2.2;rport;branch=z9hG4bK390skdjuw",
      "s :",
      "NewFangledHeader:   newfangled value",
      " continued newfangled value",
      "UnknownHeaderWithUnusualValue: ;;,,;;,;",
      "c: application/sdp",
      "m: <sip:caller@192.0.2.1:5060>",
      "",
      sdp,
    );
    const invite = parseMessage(text) as SipRequest;
    expect(invite).toBeDefined();
    expect(invite.method).toBe("INVITE");
    expect(invite.headers.cseq).toEqual({ seq: 9, method: "INVITE" });
    expect(invite.headers.from.params.tag).toBe("98asjd8");
    expect(invite.headers.to.params.tag).toBe("1918181833n");
    expect(invite.headers.via[0]!.host).toBe("192.0.2.2");
    expect(invite.content).toBe(sdp);
    expect(bodyCutShort(datagram(text), invite)).toBe(false);
  });

  it("an unknown method with a matching CSeq, and a request without a body or Content-Length", () => {
    const unknown = parseMessage(
      wire("NEWMETHOD sip:callee@example.net SIP/2.0", ...headers("NEWMETHOD"), "", ""),
    );
    expect(unknown?.method).toBe("NEWMETHOD");
    const bare = wire("OPTIONS sip:callee@example.net SIP/2.0", ...headers("OPTIONS"), "", "");
    const options = parseMessage(bare)!;
    expect(options.method).toBe("OPTIONS");
    expect(bodyCutShort(datagram(bare), options)).toBe(false);
  });

  it("a response with an empty reason phrase", () => {
    const text = wire("SIP/2.0 100 ", ...headers("INVITE"), "Content-Length: 0", "", "");
    expect(parseMessage(text)).toMatchObject({ status: 100 });
  });
});

describe("RFC 4475 §3.1.2: invalid messages", () => {
  const invite = (contentLength: string, body = sdp) =>
    wire(
      "INVITE sip:callee@example.net SIP/2.0",
      ...headers("INVITE", ["Content-Type: application/sdp", `Content-Length: ${contentLength}`]),
      "",
      body,
    );

  it("§3.1.2.2 a Content-Length larger than the datagram: 400 (bodyCutShort)", () => {
    const text = invite(String(sdp.length + 1));
    expect(bodyCutShort(datagram(text), parseMessage(text)!)).toBe(true);
  });

  it("§3.1.2.3 a negative Content-Length, §3.1.2.4 an overlarge one: 400 (bodyCutShort)", () => {
    for (const length of ["-999", "18446744073709551617"]) {
      const text = invite(length);
      expect(bodyCutShort(datagram(text), parseMessage(text)!), length).toBe(true);
    }
  });

  it("§3.1.2.4 an overlarge CSeq number is no usable request", () => {
    const text = wire(
      "OPTIONS sip:callee@example.net SIP/2.0",
      ...headers("OPTIONS").map((line) =>
        line.startsWith("CSeq") ? "CSeq: 36893488147419103232 OPTIONS" : line,
      ),
      "",
      "",
    );
    expect(parseMessage(text)).toBeUndefined();
  });

  it("§3.1.2.5/§3.1.2.19 an overlarge response code is discarded", () => {
    const text = wire(
      "SIP/2.0 4294967301 better not break the receiver",
      ...headers("OPTIONS"),
      "",
      "",
    );
    expect(parseMessage(text)).toBeUndefined();
  });

  it("§3.1.2.17/§3.1.2.18 a CSeq method that is not the request's is no usable request", () => {
    const text = wire("INVITE sip:callee@example.net SIP/2.0", ...headers("OPTIONS"), "", "");
    expect(parseMessage(text)).toBeUndefined();
    const unknown = wire("NEWMETHOD sip:callee@example.net SIP/2.0", ...headers("INVITE"), "", "");
    expect(parseMessage(unknown)).toBeUndefined();
  });

  it("a message without Via, Call-ID, From or To is no usable message", () => {
    for (const name of ["Via", "Call-ID", "From", "To"]) {
      const text = wire(
        "OPTIONS sip:callee@example.net SIP/2.0",
        ...headers("OPTIONS").filter((line) => !line.startsWith(`${name}:`)),
        "",
        "",
      );
      expect(parseMessage(text), name).toBeUndefined();
    }
  });

  it("a method that is not a token is no usable request", () => {
    const message = parseMessage(
      wire("OPTIONS sip:callee@example.net SIP/2.0", ...headers("OPTIONS"), "", ""),
    )!;
    expect(checkMessage({ ...message, method: "OPT IONS" })).toBeUndefined();
  });
});
