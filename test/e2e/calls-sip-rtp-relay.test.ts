import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, type CallPlatform } from "@switchboard/test-support/fixtures/calls";
import { startRtpengine, type Rtpengine } from "@switchboard/test-support/rtpengine";
import { freeSipPort, startSippServer, type Baresip } from "@switchboard/test-support/sip-peers";
import {
  createSeat,
  registerPhone,
  sipListener,
  sippLogged,
  startSipPlatform,
  suiteApi,
  type SipSuiteSeat as Seat,
} from "@switchboard/test-support/fixtures/sip";
import { callWhen, liveOrEnded, placeOutbound } from "@switchboard/test-support/fixtures/sip-calls";
import { skipWithoutTools } from "@switchboard/test-support/tools";

const host = "127.0.0.1";

/**
 * The RTP relay (SIP_RTP_RELAY, docs/api.md "Voice over SIP"): an outbound call over SIP whose
 * SDP goes through a real rtpengine on loopback, so the trunk is offered the relay's media
 * address (not the phone's) and the phone is given the relay's (not the trunk's); the session is
 * released when the call ends.
 */
describe.skipIf(skipWithoutTools(import.meta.url, ["rtpengine", "sipp", "baresip"]))(
  "outbound calls over SIP through the RTP relay",
  () => {
    let p: CallPlatform;
    let relay: Rtpengine;
    let token: string;
    let trunkPort: number;
    let from: string;
    let seat: Seat;
    let phone: Baresip;

    const api = suiteApi(
      () => p,
      () => token,
    );

    beforeAll(async () => {
      relay = await startRtpengine();
      trunkPort = await freeSipPort();
      ({ p, token } = await startSipPlatform({
        seed: 12,
        trunkPort,
        env: { SIP_RTP_RELAY: `${relay.host}:${relay.port}` },
      }));
      from = await p.assignNumber(token);
      seat = await createSeat(api, "desk", 2);
      phone = await registerPhone(api, seat, {
        registrar: sipListener(p, host),
        answermode: "auto",
      });
    }, 60_000);
    afterAll(async () => {
      await phone?.stop();
      await p?.stop();
      await relay?.stop();
    });

    const inRelayRange = (port: number) =>
      port >= relay.mediaPorts.min && port <= relay.mediaPorts.max;

    it("offers the trunk the relay's media port, gives the phone the relay's, and releases the session at the end", async () => {
      const sipp = await startSippServer({
        scenario: "trunk-answer-relayed.xml",
        port: trunkPort,
        timeoutMs: 30_000,
      });
      const callId = (await placeOutbound(api, { to: "+15550107101", from, seat })).id;
      const live = await callWhen(api, callId, liveOrEnded, 20_000);
      expect(live.status, phone.output().slice(-6_000)).toBe("in_progress");
      // The phone's re-INVITE (its ACK had a held answer) carries the trunk's answer as the relay
      // rewrote it: the SDP of an INVITE, not crossing into the next message.
      const reinvite =
        /INVITE sip:[^\n]*\n(?:(?!SIP\/2\.0 |ACK |BYE |INVITE )[^\n]*\n)*?m=audio (\d+)/;
      const output = await eventually(
        async () => phone.output(),
        (text) => reinvite.test(text),
        10_000,
      );
      const reinviteAudio = Number(reinvite.exec(output)?.[1]);
      expect(inRelayRange(reinviteAudio), output.slice(-4_000)).toBe(true);
      expect(reinviteAudio).not.toBe(40000);

      expect((await api("POST", `/api/calls/${callId}/hangup`)).status).toBe(200);
      const run = await sipp.done;
      expect(run.code, run.output).toBe(0);
      const logged = (name: string) => sippLogged(run, name);
      expect(logged("offer_address")).toBe(relay.host);
      expect(inRelayRange(Number(logged("offer_port")))).toBe(true);

      const held = await eventually(
        () => relay.hasSession(callId),
        (session) => !session,
        10_000,
      );
      expect(held).toBe(false);
    });
  },
);
