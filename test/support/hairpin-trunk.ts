import { randomBytes } from "node:crypto";
import { createSocket, type RemoteInfo } from "node:dgram";

/** A SIP message as text: its first line, its headers in order, its body. */
interface Message {
  first: string;
  headers: [name: string, value: string][];
  body: string;
}

const compact: Record<string, string> = {
  v: "via",
  f: "from",
  t: "to",
  i: "call-id",
  m: "contact",
  l: "content-length",
  c: "content-type",
};

function parse(text: string): Message | undefined {
  const end = text.indexOf("\r\n\r\n");
  if (end < 0) return undefined;
  const [first = "", ...lines] = text.slice(0, end).split("\r\n");
  const headers = lines.map((line): [string, string] => {
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).trim().toLowerCase();
    return [compact[name] ?? name, line.slice(colon + 1).trim()];
  });
  return { first, headers, body: text.slice(end + 4) };
}

const header = (message: Message, name: string) =>
  message.headers.find(([n]) => n === name)?.[1] ?? "";
const all = (message: Message, name: string) =>
  message.headers.filter(([n]) => n === name).map(([, v]) => v);
const tagOf = (value: string) => /;tag=([^;>\s]+)/.exec(value)?.[1];
const uriOf = (value: string) => /<([^>]+)>/.exec(value)?.[1] ?? value.split(";")[0]!;
const userOf = (uri: string) => /^sips?:([^@;]+)@/.exec(uri)?.[1] ?? "";
const newToken = () => randomBytes(8).toString("hex");

function serialize(first: string, headers: [string, string][], body = ""): string {
  const lines = headers.map(([name, value]) => `${name}: ${value}`);
  return `${[first, ...lines, `Content-Length: ${Buffer.byteLength(body)}`].join("\r\n")}\r\n\r\n${body}`;
}

/** One call the trunk carries: the leg from Switchboard (A) and the leg back to it (B). */
interface Hairpin {
  aInvite: Message;
  aSource: RemoteInfo;
  aTag: string;
  aAnswered: boolean;
  aLast?: string;
  bUri: string;
  bCallId: string;
  bTag: string;
  bBranch: string;
  bRemoteTag?: string;
  bTarget?: string;
  done: boolean;
}

export interface HairpinTrunk {
  port: number;
  /** Calls the trunk routed back (INVITEs it took from Switchboard). */
  calls(): number;
  stop(): Promise<void>;
}

/**
 * A carrier's SIP trunk that routes a call to a number back to the platform it came from (a
 * hairpin): every INVITE it receives from Switchboard it sends back to `target` as a new inbound
 * call to the same number, from the same caller, with the same SDP offer, and it bridges the two
 * legs' answers and hangups; a number the platform does not have (404) is answered by the
 * network beyond the trunk instead. A signalling B2BUA over UDP on loopback, just enough for
 * the tests: ringing, answer, BYE either way, CANCEL and failures.
 */
export async function startHairpinTrunk(options: {
  target: { host: string; port: number };
  port: number;
}): Promise<HairpinTrunk> {
  const socket = createSocket("udp4");
  const host = "127.0.0.1";
  const byA = new Map<string, Hairpin>();
  const byB = new Map<string, Hairpin>();
  let routed = 0;
  const sendTo = (text: string, port: number, address: string) =>
    socket.send(Buffer.from(text), port, address);
  const toSwitchboard = (text: string) => sendTo(text, options.target.port, options.target.host);
  const via = (branch = `z9hG4bK${newToken()}`) =>
    `SIP/2.0/UDP ${host}:${options.port};branch=${branch};rport`;
  const contact = `<sip:trunk@${host}:${options.port}>`;

  /** A response on the A leg (we are its UAS). */
  const answerA = (call: Hairpin, status: number, reason: string, sdp?: string) => {
    const invite = call.aInvite;
    const text = serialize(
      `SIP/2.0 ${status} ${reason}`,
      [
        ...all(invite, "via").map((value): [string, string] => ["Via", value]),
        ["From", header(invite, "from")],
        ["To", status === 100 ? header(invite, "to") : `${header(invite, "to")};tag=${call.aTag}`],
        ["Call-ID", header(invite, "call-id")],
        ["CSeq", header(invite, "cseq")],
        ...(status >= 180 && status < 300 ? [["Contact", contact] as [string, string]] : []),
        ...(sdp ? [["Content-Type", "application/sdp"] as [string, string]] : []),
      ],
      sdp,
    );
    call.aLast = text;
    sendTo(text, call.aSource.port, call.aSource.address);
  };

  /** A request inside the B leg's dialog (we are its UAC). */
  const requestB = (call: Hairpin, method: "ACK" | "BYE", cseq: number, branch?: string) => {
    const did = userOf(call.bUri);
    toSwitchboard(
      serialize(`${method} ${branch ? call.bUri : (call.bTarget ?? call.bUri)} SIP/2.0`, [
        ["Via", via(branch)],
        ["Max-Forwards", "70"],
        ["From", `<sip:${userOf(uriOf(header(call.aInvite, "from")))}@${host}>;tag=${call.bTag}`],
        ["To", `<sip:${did}@${options.target.host}>;tag=${call.bRemoteTag ?? ""}`],
        ["Call-ID", call.bCallId],
        ["CSeq", `${cseq} ${method}`],
      ]),
    );
  };

  /** Our BYE on the A leg (we answered it: our From is its To). */
  const byeA = (call: Hairpin) => {
    const invite = call.aInvite;
    const target = uriOf(header(invite, "contact"));
    sendTo(
      serialize(`BYE ${target} SIP/2.0`, [
        ["Via", via()],
        ["Max-Forwards", "70"],
        ["From", `${header(invite, "to")};tag=${call.aTag}`],
        ["To", header(invite, "from")],
        ["Call-ID", header(invite, "call-id")],
        ["CSeq", "1 BYE"],
      ]),
      call.aSource.port,
      call.aSource.address,
    );
  };

  const okTo = (request: Message, source: RemoteInfo) =>
    sendTo(
      serialize("SIP/2.0 200 OK", [
        ...all(request, "via").map((value): [string, string] => ["Via", value]),
        ["From", header(request, "from")],
        ["To", header(request, "to")],
        ["Call-ID", header(request, "call-id")],
        ["CSeq", header(request, "cseq")],
      ]),
      source.port,
      source.address,
    );

  const onInvite = (invite: Message, source: RemoteInfo) => {
    const known = byA.get(header(invite, "call-id"));
    if (known) {
      if (known.aLast) sendTo(known.aLast, source.port, source.address);
      return;
    }
    const requestUri = invite.first.split(" ")[1] ?? "";
    invite.headers.unshift(["request-uri", `<${requestUri}>`]);
    const did = userOf(requestUri);
    const call: Hairpin = {
      aInvite: invite,
      aSource: source,
      aTag: newToken(),
      aAnswered: false,
      bUri: `sip:${did}@${options.target.host}:${options.target.port}`,
      bCallId: `${newToken()}@${host}`,
      bTag: newToken(),
      bBranch: `z9hG4bK${newToken()}`,
      done: false,
    };
    byA.set(header(invite, "call-id"), call);
    byB.set(call.bCallId, call);
    routed += 1;
    answerA(call, 100, "Trying");
    const caller = userOf(uriOf(header(invite, "from")));
    toSwitchboard(
      serialize(
        `INVITE ${call.bUri} SIP/2.0`,
        [
          ["Via", via(call.bBranch)],
          ["Max-Forwards", "70"],
          ["From", `<sip:${caller}@${host}>;tag=${call.bTag}`],
          ["To", `<sip:${did}@${options.target.host}>`],
          ["Call-ID", call.bCallId],
          ["CSeq", "1 INVITE"],
          ["Contact", contact],
          ["Content-Type", "application/sdp"],
        ],
        invite.body,
      ),
    );
  };

  const onResponseB = (response: Message, call: Hairpin) => {
    const status = Number(response.first.split(" ")[1]);
    if (!header(response, "cseq").endsWith("INVITE") || status < 180) return;
    if (status < 200) {
      if (!call.aLast?.startsWith("SIP/2.0 180")) answerA(call, 180, "Ringing");
      return;
    }
    call.bRemoteTag = tagOf(header(response, "to"));
    if (status < 300) {
      call.bTarget = uriOf(header(response, "contact"));
      requestB(call, "ACK", 1);
      if (!call.aAnswered) {
        call.aAnswered = true;
        answerA(call, 200, "OK", response.body);
      }
      return;
    }
    requestB(call, "ACK", 1, call.bBranch);
    if (call.done) return;
    if (status === 404) {
      // Not a number of the platform's: the network beyond the trunk answers it (until BYE).
      call.aAnswered = true;
      answerA(
        call,
        200,
        "OK",
        call.aInvite.body.replace(/^o=.*$/m, `o=network 1 1 IN IP4 ${host}`),
      );
      return;
    }
    call.done = true;
    answerA(call, status, response.first.split(" ").slice(2).join(" "));
  };

  const onRequest = (request: Message, source: RemoteInfo) => {
    const method = request.first.split(" ")[0];
    const callId = header(request, "call-id");
    if (method === "INVITE" && !tagOf(header(request, "to"))) return onInvite(request, source);
    if (method === "ACK") return;
    okTo(request, source);
    const fromA = byA.get(callId);
    const fromB = byB.get(callId);
    if (method === "BYE" && fromA && !fromA.done) {
      fromA.done = true;
      if (fromA.bTarget) requestB(fromA, "BYE", 2);
    } else if (method === "BYE" && fromB && !fromB.done) {
      fromB.done = true;
      byeA(fromB);
    } else if (method === "CANCEL" && fromA && !fromA.aAnswered && !fromA.done) {
      fromA.done = true;
      answerA(fromA, 487, "Request Terminated");
      const did = userOf(fromA.bUri);
      toSwitchboard(
        serialize(`CANCEL ${fromA.bUri} SIP/2.0`, [
          ["Via", via(fromA.bBranch)],
          ["Max-Forwards", "70"],
          [
            "From",
            `<sip:${userOf(uriOf(header(fromA.aInvite, "from")))}@${host}>;tag=${fromA.bTag}`,
          ],
          ["To", `<sip:${did}@${options.target.host}>`],
          ["Call-ID", fromA.bCallId],
          ["CSeq", "1 CANCEL"],
        ]),
      );
    }
  };

  socket.on("message", (data, source) => {
    const message = parse(data.toString("utf8"));
    if (!message) return;
    if (message.first.startsWith("SIP/2.0 ")) {
      const call = byB.get(header(message, "call-id"));
      if (call) onResponseB(message, call);
      return;
    }
    onRequest(message, source);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(options.port, host, () => resolve());
  });
  return {
    port: options.port,
    calls: () => routed,
    stop: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
