import { randomBytes } from "node:crypto";
import { createSocket, type Socket } from "node:dgram";
import { startRtpengine, type Rtpengine } from "@switchboard/test-support/rtpengine";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRtpRelay, RtpRelayError, type RtpRelay } from "../src/sip/rtp-relay.js";
import { skipWithoutTools } from "@switchboard/test-support/tools";

/** A side of the call: a UDP socket standing for its media port, and what it received. */
interface MediaSide {
  socket: Socket;
  port: number;
  received: Buffer[];
}

async function mediaSide(): Promise<MediaSide> {
  const socket = createSocket("udp4");
  const received: Buffer[] = [];
  socket.on("message", (data) => received.push(data));
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", () => resolve()));
  return { socket, port: socket.address().port, received };
}

const sdpOf = (address: string, port: number) =>
  [
    "v=0",
    `o=- 1 1 IN IP4 ${address}`,
    "s=-",
    `c=IN IP4 ${address}`,
    "t=0 0",
    `m=audio ${port} RTP/AVP 0 101`,
    "a=rtpmap:0 PCMU/8000",
    "a=rtpmap:101 telephone-event/8000",
    "a=sendrecv",
    "",
  ].join("\r\n");

/** Where an SDP asks for audio: its connection address and the audio port. */
function audioTarget(sdp: string): { address: string; port: number } {
  const address = /^c=IN IP4 (\S+)/m.exec(sdp)?.[1];
  const port = Number(/^m=audio (\d+)/m.exec(sdp)?.[1]);
  if (!address || !port) throw new Error(`no audio target in:\n${sdp}`);
  return { address, port };
}

/** One PCMU RTP packet (RFC 3550 header, 20 ms of silence). */
function rtpPacket(ssrc: number, sequence: number): Buffer {
  const packet = Buffer.alloc(12 + 160, 0xff);
  packet[0] = 0x80;
  packet[1] = 0;
  packet.writeUInt16BE(sequence, 2);
  packet.writeUInt32BE(sequence * 160, 4);
  packet.writeUInt32BE(ssrc, 8);
  return packet;
}

/** Sends a packet every 20 ms until the receiver has one with this SSRC (or 5 s pass). */
async function flows(from: MediaSide, to: { address: string; port: number }, at: MediaSide) {
  const ssrc = randomBytes(4).readUInt32BE(0);
  for (let sequence = 1; sequence <= 250; sequence++) {
    from.socket.send(rtpPacket(ssrc, sequence), to.port, to.address);
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (at.received.some((packet) => packet.length >= 12 && packet.readUInt32BE(8) === ssrc)) {
      return true;
    }
  }
  return false;
}

describe.skipIf(skipWithoutTools(import.meta.url, ["rtpengine"]))(
  "the RTP relay (rtpengine over its ng protocol, a real daemon on loopback)",
  () => {
    let rtpengine: Rtpengine;
    let relay: RtpRelay;
    const sides: MediaSide[] = [];

    beforeAll(async () => {
      rtpengine = await startRtpengine();
      relay = createRtpRelay({ host: rtpengine.host, port: rtpengine.port, timeoutMs: 2_000 });
    }, 30_000);

    afterAll(async () => {
      relay?.close();
      for (const side of sides) side.socket.close();
      await rtpengine?.stop();
    });

    const newSide = async () => {
      const side = await mediaSide();
      sides.push(side);
      return side;
    };

    it("anchors both directions: each side's SDP names the relay, and RTP crosses it both ways", async () => {
      const phone = await newSide();
      const trunk = await newSide();
      const callId = `relay-${randomBytes(6).toString("hex")}`;

      const offerToTrunk = await relay.offer({
        callId,
        fromTag: "phone",
        sdp: sdpOf("127.0.0.1", phone.port),
      });
      const forTrunk = audioTarget(offerToTrunk);
      expect(forTrunk.address).toBe("127.0.0.1");
      expect(forTrunk.port).toBeGreaterThanOrEqual(rtpengine.mediaPorts.min);
      expect(forTrunk.port).toBeLessThanOrEqual(rtpengine.mediaPorts.max);
      expect(offerToTrunk).toMatch(/^a=rtpmap:0 PCMU\/8000/m);

      const answerToPhone = await relay.answer({
        callId,
        fromTag: "phone",
        toTag: "trunk",
        sdp: sdpOf("127.0.0.1", trunk.port),
      });
      const forPhone = audioTarget(answerToPhone);
      expect(forPhone.port).not.toBe(forTrunk.port);
      expect(forPhone.port).toBeGreaterThanOrEqual(rtpengine.mediaPorts.min);

      expect(await flows(phone, forPhone, trunk)).toBe(true);
      expect(await flows(trunk, forTrunk, phone)).toBe(true);

      // A repeated offer (a retransmission, a retry after a lost reply) keeps the same ports.
      const again = await relay.offer({
        callId,
        fromTag: "phone",
        sdp: sdpOf("127.0.0.1", phone.port),
      });
      expect(audioTarget(again).port).toBe(forTrunk.port);

      await relay.release(callId);
      await relay.release(callId); // already gone: still released
    }, 30_000);

    it("reaches a phone behind a NAT: media goes where its SIP came from, not to the private SDP address", async () => {
      const phone = await newSide();
      const trunk = await newSide();
      const callId = `relay-nat-${randomBytes(6).toString("hex")}`;
      const forTrunk = audioTarget(
        await relay.offer({
          callId,
          fromTag: "phone",
          // The phone knows only its private address; its SIP arrived from 127.0.0.1.
          sdp: sdpOf("10.255.255.1", phone.port),
          receivedFrom: "127.0.0.1",
        }),
      );
      const forPhone = audioTarget(
        await relay.answer({
          callId,
          fromTag: "phone",
          toTag: "trunk",
          sdp: sdpOf("127.0.0.1", trunk.port),
        }),
      );
      expect(await flows(trunk, forTrunk, phone)).toBe(true);
      expect(await flows(phone, forPhone, trunk)).toBe(true);
      await relay.release(callId);
    }, 30_000);

    it("translates SRTP (SDES) to plain RTP and back: the phone's RTP/SAVP offer reaches the trunk as RTP/AVP without keys, the trunk's answer reaches the phone as RTP/SAVP with a key", async () => {
      const callId = `relay-srtp-${randomBytes(6).toString("hex")}`;
      const key = randomBytes(30).toString("base64");
      const phoneOffer = sdpOf("127.0.0.1", 40_010)
        .replace("RTP/AVP", "RTP/SAVP")
        .replace("a=sendrecv", `a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${key}\r\na=sendrecv`);
      const toTrunk = await relay.offer({
        callId,
        fromTag: "phone",
        sdp: phoneOffer,
        profile: "RTP/AVP",
      });
      expect(toTrunk).toMatch(/^m=audio \d+ RTP\/AVP 0 101\r?$/m);
      expect(toTrunk).not.toMatch(/a=crypto|a=fingerprint/);
      const toPhone = await relay.answer({
        callId,
        fromTag: "phone",
        toTag: "trunk",
        sdp: sdpOf("127.0.0.1", 40_012),
      });
      expect(toPhone).toMatch(/^m=audio \d+ RTP\/SAVP 0 101\r?$/m);
      expect(toPhone).toMatch(/^a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:\S+/m);
      expect(toPhone).not.toContain(key);
      await relay.release(callId);

      // The other way (an inbound call to a phone on TLS): plain RTP offered as SRTP with keys.
      const inbound = `relay-srtp-in-${randomBytes(6).toString("hex")}`;
      const offered = await relay.offer({
        callId: inbound,
        fromTag: "trunk",
        sdp: sdpOf("127.0.0.1", 40_014),
        profile: "RTP/SAVP",
      });
      expect(offered).toMatch(/^m=audio \d+ RTP\/SAVP 0 101\r?$/m);
      expect(offered).toMatch(/^a=crypto:\d+ AES_CM_128_HMAC_SHA1_80 inline:\S+/m);
      expect(offered).not.toMatch(/a=fingerprint/);
      const suite = /^a=crypto:(\d+) AES_CM_128_HMAC_SHA1_80 /m.exec(offered)![1];
      const answered = await relay.answer({
        callId: inbound,
        fromTag: "trunk",
        toTag: "phone",
        sdp: sdpOf("127.0.0.1", 40_016)
          .replace("RTP/AVP", "RTP/SAVP")
          .replace(
            "a=sendrecv",
            `a=crypto:${suite} AES_CM_128_HMAC_SHA1_80 inline:${key}\r\na=sendrecv`,
          ),
      });
      expect(answered).toMatch(/^m=audio \d+ RTP\/AVP 0 101\r?$/m);
      expect(answered).not.toMatch(/a=crypto/);
      await relay.release(inbound);
    }, 30_000);

    it("reports a relay that does not answer as RtpRelayError, after its tries", async () => {
      const silent = await newSide(); // a UDP port nobody answers on
      const unreachable = createRtpRelay({
        host: "127.0.0.1",
        port: silent.port,
        timeoutMs: 100,
        attempts: 2,
      });
      try {
        await expect(
          unreachable.offer({ callId: "nobody", fromTag: "a", sdp: sdpOf("127.0.0.1", 9) }),
        ).rejects.toThrow(RtpRelayError);
      } finally {
        unreachable.close();
      }
    });

    it("reports an SDP the relay refuses as RtpRelayError with its reason", async () => {
      await expect(
        relay.answer({
          callId: "never-offered",
          fromTag: "a",
          toTag: "b",
          sdp: sdpOf("127.0.0.1", 9),
        }),
      ).rejects.toThrow(/refused the answer/);
    });
  },
);
