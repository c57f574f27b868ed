import { createSocket } from "node:dgram";
import { createLogger } from "@switchboard/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAckWaits } from "../src/carrier/sip/sip-ack-waits.js";
import { createTrunkResponses } from "../src/carrier/sip/sip-trunk-responses.js";
import { callControlSettings } from "../src/config.js";
import type { Dialog } from "../src/sip/dialogs/dialogs.js";
import { startSipEndpoint, type SipEndpoint } from "../src/sip/stack/endpoint.js";
import { e164User, readInboundInvite } from "../src/sip/inbound-invite.js";
import { parseMessage, type SipRequest, type SipResponse } from "../src/sip/stack/message.js";
import { serverInviteOf } from "../src/sip/dialogs/server-responses.js";
import { allowedSource, parseAddressBlock } from "../src/sip/trunk-allow.js";

const logger = createLogger("sip-inbound-test", { level: "silent" });

const invite = (options: { uri?: string; from?: string; extra?: string[]; sdp?: boolean } = {}) => {
  const body = options.sdp === false ? "" : "v=0\r\no=trunk 1 1 IN IP4 127.0.0.1\r\n";
  const text = [
    `INVITE ${options.uri ?? "sip:+15550100001@127.0.0.1"} SIP/2.0`,
    "Via: SIP/2.0/UDP 127.0.0.1:5999;branch=z9hG4bKtrunk1;rport",
    "Max-Forwards: 70",
    `From: <${options.from ?? "sip:+442071838750@127.0.0.1"}>;tag=trunk`,
    "To: <sip:+15550100001@127.0.0.1>",
    "Call-ID: inbound-1@trunk",
    "CSeq: 7 INVITE",
    "Contact: <sip:trunk@127.0.0.1:5999>",
    ...(options.extra ?? []),
    ...(body ? ["Content-Type: application/sdp"] : []),
    `Content-Length: ${body.length}`,
    "",
    body,
  ].join("\r\n");
  return parseMessage(text) as SipRequest;
};

describe("SIP_TRUNK_ALLOW", () => {
  it("reads addresses and CIDR blocks and matches sources inside them", () => {
    const blocks = ["10.1.2.0/24", "192.0.2.7"].map((b) => parseAddressBlock(b)!);
    expect(allowedSource(blocks, "10.1.2.200")).toBe(true);
    expect(allowedSource(blocks, "10.1.3.1")).toBe(false);
    expect(allowedSource(blocks, "192.0.2.7")).toBe(true);
    expect(allowedSource(blocks, "::ffff:192.0.2.7")).toBe(true);
    expect(allowedSource(blocks, "192.0.2.8")).toBe(false);
    expect(allowedSource(blocks, "::1")).toBe(false);
    expect(allowedSource([parseAddressBlock("0.0.0.0/0")!], "203.0.113.9")).toBe(true);
    for (const bad of ["10.1.2.0/33", "300.1.1.1", "10.1.2", "10.1.2.0/x", "a/b/c", ""]) {
      expect(parseAddressBlock(bad), bad).toBeUndefined();
    }
  });

  it("defaults to the trunk's address when it is one, and refuses a bad list", () => {
    const base = {
      NODE_ENV: "test",
      VOICE_CARRIER: "sip",
      SIP_LISTEN: "127.0.0.1:5060",
    };
    const byIp = callControlSettings.parse({ ...base, SIP_TRUNK_URI: "sip:192.0.2.10:5070" });
    expect(byIp.sip.trunkAllow).toEqual([parseAddressBlock("192.0.2.10")]);
    const byName = callControlSettings.parse({ ...base, SIP_TRUNK_URI: "sip:trunk.example.net" });
    expect(byName.sip.trunkAllow).toEqual([]);
    const listed = callControlSettings.parse({
      ...base,
      SIP_TRUNK_URI: "sip:trunk.example.net",
      SIP_TRUNK_ALLOW: "198.51.100.0/24, 203.0.113.5",
      SIP_RTP_RELAY: "127.0.0.1:2223",
    });
    expect(listed.sip.trunkAllow).toHaveLength(2);
    expect(listed.sip.rtpRelay).toEqual({ host: "127.0.0.1", port: 2223 });
    const refused = callControlSettings.safeParse({
      ...base,
      SIP_TRUNK_URI: "sip:trunk.example.net",
      SIP_TRUNK_ALLOW: "198.51.100.0/24,nope",
      SIP_RTP_RELAY: "rtpengine",
    });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues.map((i) => i.path.join("."))).toEqual([
      "SIP_TRUNK_ALLOW",
      "SIP_RTP_RELAY",
    ]);
  });
});

describe("an inbound INVITE", () => {
  it("names the DID in its Request-URI (with or without +), else in its To", () => {
    expect(e164User("sip:+15550100001@host")).toBe("+15550100001");
    expect(e164User("sip:15550100001@host;user=phone")).toBe("+15550100001");
    expect(e164User("sip:trunk@host")).toBeUndefined();
    expect(e164User("sip:%E0%A4%A@host")).toBeUndefined();
    expect(readInboundInvite(invite())).toMatchObject({
      ok: true,
      to: "+15550100001",
      from: "+442071838750",
      contact: "sip:trunk@127.0.0.1:5999",
      remoteTag: "trunk",
    });
    expect(readInboundInvite(invite({ uri: "sip:127.0.0.1" }))).toMatchObject({
      ok: true,
      to: "+15550100001",
    });
  });

  it("takes a withheld caller as `anonymous` (RFC 3323), its P-Asserted-Identity kept aside", () => {
    const pai = "P-Asserted-Identity: <sip:+442071838750@127.0.0.1;user=phone>";
    expect(
      readInboundInvite(
        invite({ from: "sip:anonymous@anonymous.invalid", extra: ["Privacy: id", pai] }),
      ),
    ).toMatchObject({
      ok: true,
      from: "anonymous",
      assertedIdentity: "<sip:+442071838750@127.0.0.1;user=phone>",
    });
    expect(readInboundInvite(invite({ from: "sip:Anonymous@127.0.0.1" }))).toMatchObject({
      from: "anonymous",
    });
    // A number with Privacy: id (or user, header) is withheld too.
    expect(readInboundInvite(invite({ extra: ["Privacy: user;id"] }))).toMatchObject({
      from: "anonymous",
    });
    expect(readInboundInvite(invite({ extra: ["Privacy: none"] }))).toMatchObject({
      from: "+442071838750",
      assertedIdentity: undefined,
    });
  });

  it("is refused without a caller number (484) or an SDP offer (488)", () => {
    expect(readInboundInvite(invite({ from: "sip:unknown@127.0.0.1" }))).toMatchObject({
      ok: false,
      status: 484,
    });
    expect(readInboundInvite(invite({ sdp: false }))).toEqual({ ok: false, status: 488 });
  });
});

describe("the final responses to the trunk's INVITE, from its row", () => {
  let endpoint: SipEndpoint;
  beforeAll(async () => {
    endpoint = await startSipEndpoint({ host: "127.0.0.1", port: 0, logger, handlers: {} });
  });
  afterAll(() => endpoint?.stop());

  it("goes statelessly to the trunk's flow when no server transaction is here, and a 2xx is resent until the ACK", async () => {
    const trunk = createSocket("udp4");
    const received: SipResponse[] = [];
    trunk.on("message", (data) => received.push(parseMessage(data) as SipResponse));
    await new Promise<void>((resolve) => trunk.bind(0, "127.0.0.1", resolve));
    const request = invite();
    const row = {
      sip_call_id: "inbound-1@trunk",
      flow_transport: "udp",
      flow_address: "127.0.0.1",
      flow_port: trunk.address().port,
      server_invite: serverInviteOf(request, "ours"),
    } as Dialog;
    const ackWaits = createAckWaits({ t1Ms: 50 });
    const responses = createTrunkResponses({ endpoint, ackWaits, trunkAllow: [], logger });
    let acked = false;
    try {
      responses.final(row, 200, { sdp: "v=0\r\n", onAcked: () => (acked = true) });
      await expect.poll(() => received.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
      const [ok] = received;
      expect(ok).toMatchObject({ status: 200, content: "v=0\r\n" });
      expect(ok!.headers.to.params.tag).toBe("ours");
      expect(ok!.headers.cseq).toEqual({ seq: 7, method: "INVITE" });
      expect(ok!.headers["call-id"]).toBe("inbound-1@trunk");
      const ack = {
        ...request,
        method: "ACK",
        headers: { ...request.headers, cseq: { seq: 7, method: "ACK" } },
      };
      // An ACK from another address than the trunk's is ignored.
      expect(ackWaits.acked(ack as SipRequest, "127.0.0.2")).toBe(false);
      expect(acked).toBe(false);
      expect(ackWaits.acked(ack as SipRequest, "127.0.0.1")).toBe(true);
      expect(acked).toBe(true);
      const count = received.length;
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(received.length).toBe(count);

      responses.final(row, 480);
      await expect.poll(() => received.at(-1)?.status, { timeout: 5_000 }).toBe(480);
    } finally {
      ackWaits.clear();
      trunk.close();
    }
  });
});
