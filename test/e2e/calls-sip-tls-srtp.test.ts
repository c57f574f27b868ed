import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skipWithoutTools } from "@switchboard/test-support/tools";
import type { CallPlatform } from "@switchboard/test-support/fixtures/calls";
import { startRtpengine, type Rtpengine } from "@switchboard/test-support/rtpengine";
import {
  freeSipPort,
  runSipp,
  startSippServer,
  type Baresip,
} from "@switchboard/test-support/sip-peers";
import {
  phoneSaw as baresipSaw,
  seatWithPhone,
  sipListener,
  sippLogged as logged,
  sippPassed as finished,
  startSipPlatform,
  suiteApi,
  type SipSuiteSeat,
} from "@switchboard/test-support/fixtures/sip";
import {
  answerInbound,
  callWhen,
  completedByCaller,
  inboundCallTo,
  legTransports,
  liveOrEnded,
  placeOutbound,
} from "@switchboard/test-support/fixtures/sip-calls";
import {
  selfSignedCertificate,
  type TestCertificate,
} from "@switchboard/test-support/tls-certificate";

const host = "127.0.0.1";

/** Lines of one message in baresip's SIP trace: none starting another message. */
const sameMessage = String.raw`(?:(?!SIP\/2\.0 |ACK |BYE )[^\n]*\n)*?`;
/** An INVITE (its request line matching `uri`) whose SDP offers SRTP with an SDES key. */
const srtpInvite = (uri: string) =>
  new RegExp(
    String.raw`INVITE sip:${uri}[^\n]*\n${sameMessage}m=audio \d+ RTP\/SAVP [^\n]*\n${sameMessage}a=crypto:\d+ [A-Z0-9_]+ inline:`,
  );

/**
 * The platform with a TLS listener presenting `certificate` (and the RTP relay if given), its
 * token and agent `alice`.
 */
const tlsPlatform = async (
  seed: number,
  certificate: TestCertificate,
  trunkPort: number,
  relay?: Rtpengine,
) =>
  startSipPlatform({
    seed,
    trunkPort,
    env: {
      SIP_TLS_PORT: "0",
      SIP_TLS_CERT_FILE: certificate.certFile,
      SIP_TLS_KEY_FILE: certificate.keyFile,
      ...(relay ? { SIP_RTP_RELAY: `${relay.host}:${relay.port}` } : {}),
    },
  });

/** baresip registered over TLS (trusting the listener's certificate) with mandatory SRTP. */
const tlsPhone = (p: CallPlatform, certificate: TestCertificate) => ({
  registrar: { host, port: p.callControl().sip!.endpoint.transport.tlsPort! },
  transport: "tls" as const,
  cafile: certificate.certFile,
  mediaenc: "srtp-mand" as const,
  answermode: "auto" as const,
});

/**
 * A phone on the internet (docs/api.md "Voice over SIP"): a real baresip registered over TLS
 * (SIP_TLS_PORT, a self-signed certificate it trusts) with mandatory SRTP (mediaenc=srtp-mand:
 * RTP/SAVP with SDES keys, RFC 4568), its media through a real rtpengine (SIP_RTP_RELAY) that
 * translates RTP/SAVP ↔ RTP/AVP, so the trunk (SIPp over UDP) sees plain RTP both ways. The
 * phone takes an outbound call and an inbound one.
 */
describe.skipIf(skipWithoutTools(import.meta.url, ["sipp", "baresip", "rtpengine"]))(
  "a phone on TLS with SRTP, through the RTP relay",
  () => {
    let certificate: TestCertificate;
    let relay: Rtpengine;
    let p: CallPlatform;
    let token: string;
    let trunkPort: number;
    let from: string;
    let did: string;
    let seat: SipSuiteSeat;
    let phone: Baresip;
    const api = suiteApi(
      () => p,
      () => token,
    );
    const phoneSaw = (pattern: RegExp) => baresipSaw(phone, pattern);

    beforeAll(async () => {
      certificate = selfSignedCertificate();
      relay = await startRtpengine();
      trunkPort = await freeSipPort();
      ({ p, token } = await tlsPlatform(33, certificate, trunkPort, relay));
      expect(p.callControl().sip!.endpoint.transport.tlsPort).toBeGreaterThan(0);
      from = await p.assignNumber(token);
      ({ seat, phone } = await seatWithPhone(api, "desk tls", tlsPhone(p, certificate)));
      did = await p.assignNumber(token);
      const routed = await api("POST", "/api/routes", {
        name: "tls line",
        numbers: [did],
        agent: "alice",
        seat_id: seat.id,
      });
      expect(routed.status, JSON.stringify(routed.body)).toBe(201);
      const { rows } = await p.db.query<{ transport: string }>(
        `SELECT transport FROM call_control.sip_registrations WHERE seat_id = $1`,
        [seat.id],
      );
      expect(rows).toEqual([{ transport: "tls" }]);
    }, 60_000);
    afterAll(async () => {
      await phone?.stop();
      await p?.stop();
      await relay?.stop();
      certificate?.remove();
    });

    it("takes an outbound call: the phone's RTP/SAVP offer reaches the trunk as RTP/AVP, the trunk's answer reaches the phone as RTP/SAVP with an SDES key", async () => {
      const sipp = await startSippServer({
        scenario: "trunk-answer-plain-rtp.xml",
        port: trunkPort,
        timeoutMs: 30_000,
      });
      const callId = (await placeOutbound(api, { to: "+15550133001", from, seat })).id;
      const live = await callWhen(api, callId, liveOrEnded, 20_000);
      expect(live.status, phone.output().slice(-8_000)).toBe("in_progress");
      // The re-INVITE giving the phone the trunk's answer: SRTP, with the relay's key.
      const reinvite = srtpInvite("");
      const output = await phoneSaw(reinvite);
      expect(reinvite.test(output), output.slice(-8_000)).toBe(true);
      expect((await api("POST", `/api/calls/${callId}/hangup`)).status).toBe(200);
      const run = await finished(sipp.done);
      expect(logged(run, "profile")).toBe("RTP/AVP");
      expect(await callWhen(api, callId)).toMatchObject(completedByCaller);
      expect(await legTransports(p, callId)).toEqual({ phone: "tls", trunk: "udp" });
    });

    it("takes an inbound call: the trunk's RTP/AVP offer reaches the phone over TLS as RTP/SAVP with an SDES key, the phone's answer reaches the trunk as RTP/AVP", async () => {
      const run = runSipp({
        scenario: "inbound-answer-plain-rtp.xml",
        target: sipListener(p, host),
        keys: { did },
        timeoutMs: 45_000,
      });
      const ringing = (await inboundCallTo(api, did))!;
      expect(ringing).toMatchObject({ status: "ringing" });
      const answered = await answerInbound(api, ringing.id);
      expect(answered.status, JSON.stringify(answered.body)).toBe(200);
      const done = await finished(run);
      expect(logged(done, "profile")).toBe("RTP/AVP");
      const offer = srtpInvite(String.raw`[^\n]*transport=tls`);
      const output = await phoneSaw(offer);
      expect(offer.test(output), output.slice(-8_000)).toBe(true);
      expect(await callWhen(api, ringing.id)).toMatchObject(completedByCaller);
    });
  },
);

/**
 * Without the RTP relay the platform cannot translate SRTP to the trunk's plain RTP: a phone on
 * TLS offering RTP/SAVP gets its outbound call refused (failed / network_error, 488) and the
 * trunk is never INVITEd.
 */
describe.skipIf(skipWithoutTools(import.meta.url, ["sipp", "baresip", "rtpengine"]))(
  "a phone on TLS with SRTP, without the RTP relay",
  () => {
    let certificate: TestCertificate;
    let p: CallPlatform;
    let token: string;
    let phone: Baresip;
    let seat: SipSuiteSeat;
    let from: string;
    const api = suiteApi(
      () => p,
      () => token,
    );

    beforeAll(async () => {
      certificate = selfSignedCertificate();
      ({ p, token } = await tlsPlatform(34, certificate, await freeSipPort()));
      from = await p.assignNumber(token);
      ({ seat, phone } = await seatWithPhone(api, "desk", tlsPhone(p, certificate)));
    }, 60_000);
    afterAll(async () => {
      await phone?.stop();
      await p?.stop();
      certificate?.remove();
    });

    it("refuses the phone's SRTP offer: failed / network_error with 488, the phone's leg ended with a BYE", async () => {
      const callId = (await placeOutbound(api, { to: "+15550133002", from, seat })).id;
      expect(await callWhen(api, callId)).toMatchObject({
        status: "failed",
        hangup_cause: "network_error",
        hangup_source: "platform",
        sip_code: 488,
      });
      const { rows } = await p.db.query<{ leg: string; state: string }>(
        `SELECT leg, state FROM call_control.sip_dialogs WHERE call_id = $1 ORDER BY leg`,
        [callId],
      );
      expect(rows).toEqual([{ leg: "phone", state: "terminated" }]);
      await baresipSaw(phone, "BYE sip:");
    });
  },
);
