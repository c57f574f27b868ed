import { randomBytes } from "node:crypto";
import { createSocket, type Socket } from "node:dgram";
import { wire } from "@switchboard/proto";
import { testDatabaseKinds } from "@switchboard/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freeSipPort } from "@switchboard/test-support/sip-peers";
import { digestHa1, digestResponse } from "../src/sip/stack/digest.js";
import {
  isRequest,
  parseMessage,
  responseTo,
  serialize,
  unquote,
  type SipRequest,
  type SipResponse,
} from "../src/sip/stack/message.js";
import { eventually, startServiceHarness, type ServiceHarness } from "./harness.js";
import { hearStatements, unitsOfWork } from "./hear-statements.js";

const account = "acct_sip_sources";
const host = "127.0.0.1";
/** Another loopback address: outside SIP_TRUNK_ALLOW (the trunk is 127.0.0.1) and no phone's. */
const attackerHost = "127.0.0.2";
const postgres = testDatabaseKinds.find((kind) => kind.name === "postgres")!;

/** A raw UDP socket speaking SIP as text: what it sent is what the test wrote. */
class UdpPeer {
  readonly inbox: (SipRequest | SipResponse)[] = [];
  private constructor(
    readonly socket: Socket,
    readonly host: string,
  ) {
    socket.on("message", (data) => {
      const message = parseMessage(data);
      if (message) this.inbox.push(message);
    });
  }
  static async bind(address: string, port = 0): Promise<UdpPeer> {
    const socket = createSocket("udp4");
    await new Promise<void>((resolve) => socket.bind(port, address, resolve));
    return new UdpPeer(socket, address);
  }
  get port(): number {
    return this.socket.address().port;
  }
  send(lines: string[] | string, port: number, body = ""): void {
    const head = typeof lines === "string" ? lines : lines.join("\r\n");
    const text =
      typeof lines === "string"
        ? head
        : `${head}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    this.socket.send(text, port, host);
  }
  /** The first message (from index `from` on) `match` accepts, within 10 s. */
  async next<T extends SipRequest | SipResponse>(
    match: (message: SipRequest | SipResponse) => boolean,
    from = 0,
  ): Promise<T> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const found = this.inbox.slice(from).find(match);
      if (found) return found as T;
      if (Date.now() > deadline) throw new Error(`${this.host}: no matching message`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  close(): void {
    this.socket.close();
  }
}

const sdp = (address: string, port: number) =>
  [
    "v=0",
    `o=peer 1 1 IN IP4 ${address}`,
    "s=-",
    `c=IN IP4 ${address}`,
    "t=0 0",
    `m=audio ${port} RTP/AVP 0`,
    "a=rtpmap:0 PCMU/8000",
    "",
  ].join("\r\n");
const branch = () => `z9hG4bK${randomBytes(8).toString("hex")}`;
const responseOf =
  (status: number, callId: string, method: string) => (m: SipRequest | SipResponse) =>
    !isRequest(m) &&
    m.status === status &&
    m.headers["call-id"] === callId &&
    m.headers.cseq.method === method;

/** `peer`'s 200 to `invite` (its tag, its Contact, an answer with media at `mediaPort`). */
const answerInvite = (
  peer: UdpPeer,
  invite: SipRequest,
  sipPort: number,
  answer: { user: string; tag: string; mediaPort: number },
) => {
  const ok = responseTo(invite, 200, {
    contact: [{ uri: `sip:${answer.user}@${host}:${peer.port}`, params: {} }],
    "content-type": "application/sdp",
  });
  ok.headers.to.params.tag = answer.tag;
  ok.content = sdp(host, answer.mediaPort);
  peer.socket.send(serialize(ok), sipPort, host);
};

/**
 * Requests inside a call's dialogs must come from that leg's peer (docs/security.md): the
 * trunk's (SIP_TRUNK_ALLOW) or the phone's (where its registration came from). Real UDP on
 * loopback, real PostgreSQL: the trunk and the phone are raw sockets on 127.0.0.1, the
 * attacker one on 127.0.0.2 that knows every Call-ID and tag (read from the database). A
 * request whose CSeq is not above the peer's last in the dialog gets 500 (RFC 3261 §12.2.2).
 */
describe("in-dialog SIP requests: from the leg's peer only, in CSeq order", () => {
  let h: ServiceHarness;
  let sipPort: number;
  let trunk: UdpPeer;
  let phone: UdpPeer;
  let attacker: UdpPeer;
  let seatId: string;
  const dids: string[] = [];

  beforeAll(async () => {
    sipPort = await freeSipPort();
    [trunk, phone, attacker] = await Promise.all([
      freeSipPort().then((port) => UdpPeer.bind(host, port)),
      UdpPeer.bind(host),
      UdpPeer.bind(attackerHost),
    ]);
    h = await startServiceHarness(postgres, {
      VOICE_CARRIER: "sip",
      SIP_LISTEN: `${host}:${sipPort}`,
      SIP_DOMAIN: host,
      SIP_DIGEST_ALGORITHMS: "MD5",
      SIP_TRUNK_URI: `sip:${host}:${trunk.port}`,
    });
    await h.call(h.client.createAgent, { accountId: account, name: "front-desk" });
    const created = await h.call(h.client.createSeat, {
      accountId: account,
      name: "desk",
      maxConcurrentCalls: 5,
    });
    seatId = created.seat!.id;
    for (let i = 0; i < 4; i++) dids.push(await h.assignNumber(account));
    await h.call(h.client.createRoute, {
      accountId: account,
      name: "main",
      numbers: dids,
      agent: "front-desk",
      seatId,
    });
    await registerPhone(created.sipPassword);
    // The phone answers every INVITE with 200 (its tag, its Contact, an answer).
    phone.socket.on("message", (data) => {
      const message = parseMessage(data);
      if (!message || !isRequest(message) || message.method !== "INVITE") return;
      answerInvite(phone, message, sipPort, { user: "desk", tag: "phonetag", mediaPort: 40_100 });
    });
  }, 60_000);
  afterAll(async () => {
    trunk?.close();
    phone?.close();
    attacker?.close();
    await h?.stop();
  });

  async function registerPhone(password: string) {
    const request = (cseq: number, authorization?: string) => [
      `REGISTER sip:${host} SIP/2.0`,
      `Via: SIP/2.0/UDP ${host}:${phone.port};branch=${branch()};rport`,
      "Max-Forwards: 70",
      `From: <sip:${seatId}@${host}>;tag=reg`,
      `To: <sip:${seatId}@${host}>`,
      "Call-ID: phone-registration",
      `CSeq: ${cseq} REGISTER`,
      `Contact: <sip:desk@${host}:${phone.port}>`,
      "Expires: 600",
      ...(authorization ? [`Authorization: ${authorization}`] : []),
    ];
    phone.send(request(1), sipPort);
    const challenge = await phone.next<SipResponse>(
      responseOf(401, "phone-registration", "REGISTER"),
    );
    const nonce = unquote(challenge.headers["www-authenticate"]![0]!.nonce)!;
    const response = digestResponse({
      algorithm: "MD5",
      ha1: digestHa1("MD5", seatId, host, password),
      nonce,
      method: "REGISTER",
      uri: `sip:${host}`,
      qop: "auth",
      nc: "00000001",
      cnonce: "ab12",
    });
    phone.send(
      request(
        2,
        `Digest username="${seatId}", realm="${host}", nonce="${nonce}", uri="sip:${host}", ` +
          `response="${response}", algorithm=MD5, qop=auth, nc=00000001, cnonce="ab12"`,
      ),
      sipPort,
    );
    await phone.next(responseOf(200, "phone-registration", "REGISTER"));
  }

  /** The trunk's INVITE to `did` (from 127.0.0.1, allowed); resolves once it rings. */
  async function inboundCall(did: string) {
    const sipCallId = `inbound-${randomBytes(4).toString("hex")}`;
    const invite = {
      sipCallId,
      branch: branch(),
      fromTag: "trunktag",
      uri: `sip:${did}@${host}:${sipPort}`,
    };
    trunk.send(
      [
        `INVITE ${invite.uri} SIP/2.0`,
        `Via: SIP/2.0/UDP ${host}:${trunk.port};branch=${invite.branch}`,
        "Max-Forwards: 70",
        `From: <sip:+442071838750@${host}>;tag=${invite.fromTag}`,
        `To: <sip:${did}@${host}>`,
        `Call-ID: ${sipCallId}`,
        "CSeq: 1 INVITE",
        `Contact: <sip:trunk@${host}:${trunk.port}>`,
        "Content-Type: application/sdp",
      ],
      sipPort,
      sdp(host, 40_000),
    );
    const ringing = await trunk.next<SipResponse>(responseOf(180, sipCallId, "INVITE"));
    const callId = (
      await h.pool.query<{ call_id: string }>(
        `SELECT call_id FROM call_control.sip_dialogs WHERE sip_call_id = $1`,
        [sipCallId],
      )
    ).rows[0]!.call_id;
    return { ...invite, did, toTag: String(ringing.headers.to.params.tag), callId };
  }

  const callOf = async (callId: string) => {
    const { call } = await h.call(h.client.getCall, { accountId: account, callId });
    return { status: wire.callStatus.spell(call!.status), endedAt: call!.endedAt };
  };
  const endedCall = (callId: string) =>
    eventually(
      () => callOf(callId),
      (c) => c.endedAt !== undefined,
      10_000,
    );

  /** A request of the trunk's dialog of an inbound call, as the trunk sends it. */
  const inTrunkDialog = (
    call: Awaited<ReturnType<typeof inboundCall>>,
    method: string,
    cseq: number,
  ) => [
    `${method} sip:switchboard@${host}:${sipPort} SIP/2.0`,
    `Via: SIP/2.0/UDP ${host}:${trunk.port};branch=${branch()}`,
    "Max-Forwards: 70",
    `From: <sip:+442071838750@${host}>;tag=${call.fromTag}`,
    `To: <sip:${call.did}@${host}>;tag=${call.toTag}`,
    `Call-ID: ${call.sipCallId}`,
    `CSeq: ${cseq} ${method}`,
  ];

  /** An inbound call to `did`, answered, the trunk's ACK sent. */
  const answeredInboundCall = async (did: string) => {
    const call = await inboundCall(did);
    await h.call(h.client.answerInboundCall, { accountId: account, callId: call.callId });
    await trunk.next(responseOf(200, call.sipCallId, "INVITE"));
    trunk.send(inTrunkDialog(call, "ACK", 1), sipPort);
    return call;
  };

  it("a CANCEL from outside SIP_TRUNK_ALLOW gets 403 and the call keeps ringing; the trunk's own CANCEL ends it", async () => {
    const call = await inboundCall(dids[0]!);
    const cancel = (from: UdpPeer) =>
      from.send(
        [
          `CANCEL ${call.uri} SIP/2.0`,
          `Via: SIP/2.0/UDP ${from.host}:${from.port};branch=${call.branch}`,
          "Max-Forwards: 70",
          `From: <sip:+442071838750@${host}>;tag=${call.fromTag}`,
          `To: <sip:${dids[0]}@${host}>`,
          `Call-ID: ${call.sipCallId}`,
          "CSeq: 1 CANCEL",
        ],
        sipPort,
      );
    cancel(attacker);
    await attacker.next(responseOf(403, call.sipCallId, "CANCEL"));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await callOf(call.callId)).toMatchObject({ status: "ringing", endedAt: undefined });
    const { rows } = await h.pool.query(
      `SELECT state FROM call_control.sip_dialogs WHERE call_id = $1`,
      [call.callId],
    );
    expect(rows).toEqual([{ state: "calling" }]);

    cancel(trunk);
    await trunk.next(responseOf(200, call.sipCallId, "CANCEL"));
    await trunk.next(responseOf(487, call.sipCallId, "INVITE"));
    const ended = await endedCall(call.callId);
    expect(ended.status).toBe("canceled");
  });

  it("a re-INVITE or BYE from another address than the phone's or the trunk's gets 403 and changes nothing", async () => {
    const call = await answeredInboundCall(dids[1]!);
    const dialogs = async () =>
      (
        await h.pool.query<{
          leg: string;
          sip_call_id: string;
          local_tag: string;
          remote_tag: string;
          local_uri: string;
          remote_uri: string;
          remote_target: string;
          state: string;
        }>(
          `SELECT leg, sip_call_id, local_tag, remote_tag, local_uri, remote_uri, remote_target, state
             FROM call_control.sip_dialogs WHERE call_id = $1 ORDER BY leg`,
          [call.callId],
        )
      ).rows;
    const confirmed = await eventually(
      dialogs,
      (rows) => rows.every((r) => r.state === "confirmed") && rows.length === 2,
      10_000,
    );
    const [phoneLeg, trunkLeg] = confirmed;
    expect(phoneLeg!.remote_target).toBe(`sip:desk@${host}:${phone.port}`);

    /** A request of `leg`'s dialog as its peer would send it, from the attacker's socket. */
    const inDialog = (leg: typeof phoneLeg, method: string, cseq: number, extra: string[] = []) => {
      const before = attacker.inbox.length;
      attacker.send(
        [
          `${method} sip:switchboard@${host}:${sipPort} SIP/2.0`,
          `Via: SIP/2.0/UDP ${attackerHost}:${attacker.port};branch=${branch()}`,
          "Max-Forwards: 70",
          `From: <${leg!.remote_uri}>;tag=${leg!.remote_tag}`,
          `To: <${leg!.local_uri}>;tag=${leg!.local_tag}`,
          `Call-ID: ${leg!.sip_call_id}`,
          `CSeq: ${cseq} ${method}`,
          ...extra,
        ],
        sipPort,
        method === "INVITE" ? sdp(attackerHost, 40_200) : "",
      );
      return attacker.next<SipResponse>(
        (m) => !isRequest(m) && m.headers.cseq.method === method && m.status >= 200,
        before,
      );
    };
    const evil = [
      `Contact: <sip:evil@${attackerHost}:${attacker.port}>`,
      "Content-Type: application/sdp",
    ];
    expect((await inDialog(phoneLeg, "INVITE", 50, evil)).status).toBe(403);
    expect((await inDialog(trunkLeg, "INVITE", 50, evil)).status).toBe(403);
    expect((await inDialog(phoneLeg, "BYE", 51)).status).toBe(403);
    expect((await inDialog(trunkLeg, "BYE", 51)).status).toBe(403);
    expect(await dialogs()).toEqual(confirmed);
    // A trunk leg whose peer is named by DNS: the BYE's own statement cannot judge its source,
    // so the name is resolved (localhost: not the attacker's address) and nothing changes.
    await h.pool.query(
      `UPDATE call_control.sip_dialogs SET flow_address = 'localhost'
        WHERE call_id = $1 AND leg = 'trunk'`,
      [call.callId],
    );
    expect((await inDialog(trunkLeg, "BYE", 52)).status).toBe(403);
    expect(await dialogs()).toEqual(confirmed);
    expect(await callOf(call.callId)).toMatchObject({ status: "in_progress", endedAt: undefined });

    // The trunk's own BYE ends the call.
    trunk.send(inTrunkDialog(call, "BYE", 2), sipPort);
    await trunk.next(responseOf(200, call.sipCallId, "BYE"));
    const ended = await endedCall(call.callId);
    expect(ended.status).toBe("completed");
  });

  it("a trunk BYE whose CSeq is not above the trunk's last gets 500 and changes nothing; the next ends the call touching the dialogs in 1 statement", async () => {
    const call = await answeredInboundCall(dids[2]!);
    const dialogs = async () =>
      (
        await h.pool.query<{ leg: string; state: string; remote_cseq: number | null }>(
          `SELECT leg, state, remote_cseq::int AS remote_cseq
             FROM call_control.sip_dialogs WHERE call_id = $1 ORDER BY leg`,
          [call.callId],
        )
      ).rows;
    const confirmed = await eventually(
      dialogs,
      (rows) => rows.length === 2 && rows.every((r) => r.state === "confirmed"),
      10_000,
    );

    // CSeq 1 is the trunk's INVITE's: a BYE with it is out of order (RFC 3261 §12.2.2).
    let from = trunk.inbox.length;
    trunk.send(inTrunkDialog(call, "BYE", 1), sipPort);
    await trunk.next(responseOf(500, call.sipCallId, "BYE"), from);
    expect(await dialogs()).toEqual(confirmed);
    expect(await callOf(call.callId)).toMatchObject({ status: "in_progress", endedAt: undefined });

    const touchingDialogs: string[] = [];
    const unhear = await hearStatements(h.pool, (_app, _text, text) => {
      // Not the pool's one-time probe of whether a statement's text can be prepared.
      if (text.includes("sip_dialogs") && !/^PREPARE sbp_/.test(text)) touchingDialogs.push(text);
    });
    try {
      from = trunk.inbox.length;
      trunk.send(inTrunkDialog(call, "BYE", 2), sipPort);
      await trunk.next(responseOf(200, call.sipCallId, "BYE"), from);
    } finally {
      unhear();
    }
    // Its leg found (the call locked) and closed with its CSeq, and the phone's leg with it (its
    // BYE follows), in one statement.
    expect(touchingDialogs, touchingDialogs.join("\n---\n")).toHaveLength(1);
    expect(await dialogs()).toEqual([
      { leg: "phone", state: "terminated", remote_cseq: confirmed[0]!.remote_cseq },
      { leg: "trunk", state: "terminated", remote_cseq: 2 },
    ]);
    const ended = await endedCall(call.callId);
    expect(ended.status).toBe("completed");
  });

  it("a BYE in a trunk leg whose peer is named by DNS is taken from an address the name resolves to", async () => {
    const call = await answeredInboundCall(dids[0]!);
    const dialogs = async () =>
      (
        await h.pool.query<{ leg: string; state: string }>(
          `SELECT leg, state FROM call_control.sip_dialogs WHERE call_id = $1 ORDER BY leg`,
          [call.callId],
        )
      ).rows;
    await eventually(
      dialogs,
      (rows) => rows.length === 2 && rows.every((r) => r.state === "confirmed"),
      10_000,
    );
    // A name, not an address literal, that the system resolver answers with 127.0.0.2 (the
    // numeric form getaddrinfo reads), which SIP_TRUNK_ALLOW (127.0.0.1) does not hold: the
    // BYE's statement cannot judge it, the resolution after it does.
    await h.pool.query(
      `UPDATE call_control.sip_dialogs SET flow_address = '2130706434'
        WHERE call_id = $1 AND leg = 'trunk'`,
      [call.callId],
    );
    const from = attacker.inbox.length;
    attacker.send(
      [
        `BYE sip:switchboard@${host}:${sipPort} SIP/2.0`,
        `Via: SIP/2.0/UDP ${attackerHost}:${attacker.port};branch=${branch()}`,
        "Max-Forwards: 70",
        `From: <sip:+442071838750@${host}>;tag=${call.fromTag}`,
        `To: <sip:${call.did}@${host}>;tag=${call.toTag}`,
        `Call-ID: ${call.sipCallId}`,
        "CSeq: 2 BYE",
      ],
      sipPort,
    );
    await attacker.next(responseOf(200, call.sipCallId, "BYE"), from);
    expect(await dialogs()).toEqual([
      { leg: "phone", state: "terminated" },
      { leg: "trunk", state: "terminated" },
    ]);
    expect((await endedCall(call.callId)).status).toBe("completed");
  });

  /** An outbound call from the seat (its phone rings first, then the trunk); its id. */
  const placeFromSeat = async (to: string, from: string) => {
    const placed = await h.call(h.client.createOutboundCall, {
      accountId: account,
      to,
      from,
      agent: "front-desk",
      seatId,
    });
    return placed.call!.id;
  };

  /** The trunk's BYE in the dialog its 2xx (tagged `tag`) to `invite` made; resolves on its 200. */
  const trunkHangsUp = async (invite: SipRequest, tag: string) => {
    const from = trunk.inbox.length;
    trunk.send(
      [
        `BYE sip:switchboard@${host}:${sipPort} SIP/2.0`,
        `Via: SIP/2.0/UDP ${host}:${trunk.port};branch=${branch()}`,
        "Max-Forwards: 70",
        `From: <${invite.headers.to.uri}>;tag=${tag}`,
        `To: <${invite.headers.from.uri}>;tag=${invite.headers.from.params.tag}`,
        `Call-ID: ${invite.headers["call-id"]}`,
        "CSeq: 1 BYE",
      ],
      sipPort,
    );
    await trunk.next(responseOf(200, invite.headers["call-id"], "BYE"), from);
  };

  it("an outbound call's dial locks the call and finds the seat's phone in one statement", async () => {
    const from = phone.inbox.length;
    const readingPhones: string[] = [];
    const unhear = await hearStatements(h.pool, (_app, _text, text) => {
      if (text.includes("sip_registrations")) readingPhones.push(text);
    });
    let callId: string;
    try {
      callId = await placeFromSeat("+15550109101", dids[2]!);
      await phone.next((m) => isRequest(m) && m.method === "INVITE", from);
    } finally {
      unhear();
    }
    expect(readingPhones, readingPhones.join("\n---\n")).toHaveLength(1);
    expect(readingPhones[0]).toMatch(/FROM call_control\.calls c[\s\S]*FOR UPDATE OF c/);
    await h.call(h.client.hangupCall, { accountId: account, callId });
    expect((await endedCall(callId)).endedAt).toBeDefined();
  });

  it("an outbound call's trunk 200 confirms the trunk's leg and reads the phone's in one statement", async () => {
    const from = trunk.inbox.length;
    const callId = await placeFromSeat("+15550109100", dids[3]!);
    const invite = await trunk.next<SipRequest>((m) => isRequest(m) && m.method === "INVITE", from);
    const touchingDialogs: string[] = [];
    const unhear = await hearStatements(h.pool, (_app, _text, text) => {
      // Not the CSeq the phone's re-INVITE (the trunk's answer, after the commit) takes.
      const reinviteCseq = text.includes("local_cseq = local_cseq + 1");
      // Nor the pool's one-time probe of whether a statement's text can be prepared.
      const probe = /^PREPARE sbp_/.test(text);
      if (text.includes("sip_dialogs") && !reinviteCseq && !probe) touchingDialogs.push(text);
    });
    try {
      answerInvite(trunk, invite, sipPort, {
        user: "trunk",
        tag: "trunkanswer",
        mediaPort: 40_300,
      });
      await trunk.next((m) => isRequest(m) && m.method === "ACK", from);
    } finally {
      unhear();
    }
    expect(touchingDialogs, touchingDialogs.join("\n---\n")).toHaveLength(1);
    expect(
      await eventually(
        () => callOf(callId),
        (c) => c.status === "in_progress",
        10_000,
      ),
    ).toMatchObject({ status: "in_progress" });

    // The trunk hangs up: the call completes.
    await trunkHangsUp(invite, "trunkanswer");
    const ended = await endedCall(callId);
    expect(ended.status).toBe("completed");
  });

  it("an outbound call's SIP life, placement to the trunk's BYE, is 11 round trips in its units of work", async () => {
    const work = unitsOfWork();
    const unhear = await hearStatements(h.pool, work.hear);
    const trunkFrom = trunk.inbox.length;
    const phoneFrom = phone.inbox.length;
    const phoneGot = (method: string, count: number) =>
      eventually(
        async () =>
          phone.inbox.slice(phoneFrom).filter((m) => isRequest(m) && m.method === method).length,
        (n) => n >= count,
        10_000,
      );
    let callId: string;
    try {
      callId = await placeFromSeat("+15550109102", dids[1]!);
      const invite = await trunk.next<SipRequest>(
        (m) => isRequest(m) && m.method === "INVITE",
        trunkFrom,
      );
      answerInvite(trunk, invite, sipPort, { user: "trunk", tag: "lifeanswer", mediaPort: 40_400 });
      await trunk.next((m) => isRequest(m) && m.method === "ACK", trunkFrom);
      // The phone: its INVITE and its re-INVITE with the trunk's answer, each 2xx ACKed.
      await phoneGot("ACK", 2);
      await trunkHangsUp(invite, "lifeanswer");
      await phoneGot("BYE", 1);
    } finally {
      unhear();
    }
    expect((await endedCall(callId)).status).toBe("completed");
    const calls = work
      .units()
      // Not the pool's one-time probe of whether a statement's text can be prepared.
      .filter((unit) => !/^PREPARE sbp_/.test(unit[0]!))
      .filter((unit) => unit.some((text) => /call_control\.(calls|sip_dialogs)\b/.test(text)));
    const shown = calls.map((unit) => unit.join("\n  ; ")).join("\n---\n");
    // The placement (1), the dial (1), the phone's INVITE (2), its 200 and the trunk's INVITE
    // (2), the trunk's 200 (2), the CSeq of the phone's re-INVITE (1), the trunk's BYE (2).
    expect(
      calls.map((unit) => unit.length),
      shown,
    ).toEqual([1, 1, 2, 2, 2, 1, 2]);
  });
});
