import { createSocket } from "node:dgram";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRtpengine, type Rtpengine } from "@switchboard/test-support/rtpengine";
import type { SipEdge } from "@switchboard/test-support/sip-edge";
import {
  freeSipPort,
  runSipp,
  startBaresip,
  startSippServer,
  type Baresip,
  type SippRun,
} from "@switchboard/test-support/sip-peers";
import {
  selfSignedCertificate,
  type TestCertificate,
} from "@switchboard/test-support/tls-certificate";
import { skipWithoutTools } from "@switchboard/test-support/tools";
import type { RunningCallControl } from "../src/server.js";
import { parseMessage, type SipResponse } from "../src/sip/stack/message.js";
import { startEdgeWithReplicas } from "./sip-edge-replicas.js";
import {
  endedCall,
  eventually,
  inboundCallTo,
  phoneLegOf,
  routedSipSeat,
  spelledCall,
  type ServiceHarness,
} from "./harness.js";

const account = "acct_sip_edge_tls";
const host = "127.0.0.1";

/** Lines of one message in baresip's SIP trace: none starting another message. */
const sameMessage = String.raw`(?:(?!SIP\/2\.0 |ACK |BYE )[^\n]*\n)*?`;
/** An INVITE (its request line matching `uri`) whose SDP offers SRTP with an SDES key. */
const srtpInvite = (uri: string) =>
  new RegExp(
    String.raw`INVITE sip:${uri}[^\n]*\n${sameMessage}m=audio \d+ RTP\/SAVP [^\n]*\n${sameMessage}a=crypto:\d+ [A-Z0-9_]+ inline:`,
    "g",
  );

/** One OPTIONS over UDP to `port` (as the edge's dispatcher probes); its response. */
async function optionsTo(port: number): Promise<SipResponse | undefined> {
  const socket = createSocket("udp4");
  const answered = new Promise<SipResponse>((resolve) =>
    socket.on("message", (data) => resolve(parseMessage(data) as SipResponse)),
  );
  await new Promise<void>((resolve) => socket.bind(0, host, resolve));
  const local = socket.address().port;
  const branch = `z9hG4bKprobe${Date.now()}`;
  const request = [
    `OPTIONS sip:${host}:${port} SIP/2.0`,
    `Via: SIP/2.0/UDP ${host}:${local};branch=${branch};rport`,
    "Max-Forwards: 70",
    `From: <sip:probe@${host}>;tag=probe`,
    `To: <sip:${host}:${port}>`,
    `Call-ID: ${branch}@test`,
    "CSeq: 1 OPTIONS",
    "Content-Length: 0",
    "",
    "",
  ].join("\r\n");
  socket.send(request, port, host);
  const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 2_000));
  try {
    return await Promise.race([answered, timeout]);
  } finally {
    socket.close();
  }
}

/**
 * A phone on the internet behind the chart's SIP edge (docs/operations.md "The SIP edge"): real
 * kamailio with the chart's kamailio.cfg terminating TLS (sipEdge.tls: a certificate the phone
 * trusts) in front of two call-control replicas on one database, a real baresip registered over
 * TLS through it with mandatory SRTP (SDES), media through a real rtpengine (SIP_RTP_RELAY) that
 * gives the phone RTP/SAVP and the trunk (SIPp over UDP) plain RTP. The phone takes an outbound
 * call placed through the API, INVITEd by one replica, and an inbound call, INVITEd by the
 * other, each over the edge's TLS connection to it. Then a replica drains (SIGTERM with a live
 * call): its OPTIONS are answered 503 and the edge's dispatcher takes it out.
 */
describe.skipIf(skipWithoutTools(import.meta.url, ["kamailio", "sipp", "baresip", "rtpengine"]))(
  "a phone on TLS with SRTP behind the SIP edge, two call-control replicas",
  () => {
    let certificate: TestCertificate;
    let relay: Rtpengine;
    let h: ServiceHarness;
    let b: RunningCallControl;
    let edge: SipEdge;
    let phone: Baresip;
    let seatId: string;
    let from: string;
    let sipPortA: number;
    let sipPortB: number;
    let trunkPort: number;
    let corePort: number;
    const dids: string[] = [];

    beforeAll(async () => {
      certificate = selfSignedCertificate();
      relay = await startRtpengine();
      trunkPort = await freeSipPort();
      const tlsPort = await freeSipPort();
      ({ h, b, edge, sipPortA, sipPortB, corePort } = await startEdgeWithReplicas(
        {
          SIP_TRUNK_URI: `sip:${host}:${trunkPort};transport=udp`,
          SIP_RTP_RELAY: `${relay.host}:${relay.port}`,
        },
        { tls: { port: tlsPort, certificate: certificate.certFile, key: certificate.keyFile } },
      ));
      from = await h.assignNumber(account);
      const routed = await routedSipSeat(h, account, 2);
      seatId = routed.seat.id;
      dids.push(...routed.dids);
      phone = await startBaresip({
        username: seatId,
        password: routed.seat.password,
        registrar: { host, port: tlsPort },
        transport: "tls",
        cafile: certificate.certFile,
        mediaenc: "srtp-mand",
        answermode: "auto",
        regint: 600,
      });
    }, 90_000);
    afterAll(async () => {
      await phone?.stop();
      await edge?.stop();
      await h?.stop();
      await relay?.stop();
      certificate?.remove();
    });

    const registration = () =>
      eventually(
        async () =>
          (
            await h.pool.query<{ transport: string; source_port: number; path: string[] }>(
              `SELECT transport, source_port, path FROM call_control.sip_registrations
                WHERE seat_id = $1`,
              [seatId],
            )
          ).rows,
        (rows) => rows.length === 1,
        20_000,
      ).then((rows) => rows[0]!);

    const phoneLeg = (callId: string) => phoneLegOf(h, callId);
    const diagnosis = () =>
      `--- phone\n${phone.output().slice(-6000)}\n--- edge\n${edge.output().slice(-6000)}`;
    const finished = async (run: Promise<SippRun>) => {
      const result = await run;
      expect(result.code, `${result.output}\n${diagnosis()}`).toBe(0);
      return result;
    };
    const logged = (run: SippRun, name: string) =>
      run.logs.find((line) => line.startsWith(`${name}=`))?.slice(name.length + 1);
    /** How many SRTP INVITEs (with `uri` in their request line) the phone has seen. */
    const srtpInvites = (uri = "") => (phone.output().match(srtpInvite(uri)) ?? []).length;

    /** The API places a call from the seat's phone to `to` (agent front-desk); its id. */
    const placeOutbound = async (to: string) => {
      const request = { accountId: account, to, from, agent: "front-desk", seatId };
      return (await h.call(h.client.createOutboundCall, request)).call!.id;
    };
    /** The replica on `replicaPort` INVITEd the phone, over UDP to the edge, and it answered. */
    const invitedThroughEdgeBy = async (callId: string, replicaPort: number) =>
      expect(await phoneLeg(callId)).toMatchObject({
        owner_address: `${host}:${replicaPort}`,
        flow_transport: "udp",
        flow_port: corePort,
        acked: true,
      });

    /** The trunk (SIPp from 127.0.0.1) calls `did` at `replicaPort`; the account answers. */
    const inboundCall = (did: string, replicaPort: number) => {
      const run = runSipp({
        scenario: "inbound-answer-plain-rtp.xml",
        target: { host, port: replicaPort },
        keys: { did },
        timeoutMs: 45_000,
      });
      return { run, callId: inboundCallTo(h, did) };
    };

    it("registers the phone over TLS through the edge, with the edge's Path holding its TLS connection", async () => {
      const row = await registration();
      expect(row).toMatchObject({ transport: "udp", source_port: corePort });
      expect(row.path).toHaveLength(1);
      expect(row.path[0]).toMatch(new RegExp(`;received=sip:${host}:\\d+%3[Bb]transport%3[Dd]tls`));
      const destinations = await eventually(
        () => edge.destinations(),
        (list) => list.length === 2 && list.every((d) => d.flags === "AP"),
        15_000,
      );
      expect(destinations.every((d) => d.flags === "AP")).toBe(true);
    });

    it("takes an outbound call placed through the API, INVITEd by replica B: SRTP to the phone, plain RTP to the trunk", async () => {
      await registration();
      // Only B runs durable actions: the call's dial INVITEs the phone from B.
      await h.running.timers.stop();
      const trunk = await startSippServer({
        scenario: "trunk-answer-plain-rtp.xml",
        port: trunkPort,
        timeoutMs: 30_000,
      });
      const callId = await placeOutbound("+15550133011");
      const live = await eventually(
        () => spelledCall(h, account, callId),
        (call) => call.status === "in_progress" || call.endedAt !== undefined,
        20_000,
      );
      expect(live.status, diagnosis()).toBe("in_progress");
      // The re-INVITE giving the phone the trunk's answer: SRTP, with the relay's key.
      const reinvites = await eventually(
        async () => srtpInvites(),
        (n) => n >= 1,
        10_000,
      );
      expect(reinvites, diagnosis()).toBeGreaterThanOrEqual(1);
      await h.call(h.client.hangupCall, { accountId: account, callId });
      const run = await finished(trunk.done);
      expect(logged(run, "profile")).toBe("RTP/AVP");
      expect(await endedCall(h, account, callId)).toMatchObject({
        status: "completed",
        hangupCause: "normal_clearing",
      });
      await invitedThroughEdgeBy(callId, sipPortB);
    });

    it("relays the trunk's re-INVITE (hold) to the phone as SRTP through the edge, and the phone's answer back", async () => {
      // B still runs the durable actions (A's timers stopped above).
      const trunk = await startSippServer({
        scenario: "trunk-reinvite.xml",
        port: trunkPort,
        timeoutMs: 30_000,
      });
      const callId = await placeOutbound("+15550133012");
      const before = srtpInvites();
      // The phone's re-INVITEs: the trunk's answer, then its hold (a=sendonly), both SRTP.
      const reinvites = await eventually(
        async () => srtpInvites() - before,
        (n) => n >= 2,
        15_000,
      );
      const leg = await phoneLeg(callId);
      expect(reinvites, `${JSON.stringify(leg)}\n${diagnosis()}`).toBe(2);
      // The edge's Record-Route on the phone's side (the route set's last entry) says TLS.
      expect(leg!.route_set.at(-1)).toMatch(/;transport=tls\b/i);
      await h.call(h.client.hangupCall, { accountId: account, callId });
      const run = await finished(trunk.done);
      expect(logged(run, "reanswer")).toMatch(/^recvonly /);
      expect(await endedCall(h, account, callId)).toMatchObject({ status: "completed" });
    });

    it("takes an inbound call, INVITEd by replica A over the edge's TLS connection: the trunk's plain RTP offered to the phone as SRTP", async () => {
      // A new A (its timers running) and B's timers stopped: the answer INVITEs the phone from A.
      await h.restart();
      await b.timers.stop();
      const before = srtpInvites(String.raw`[^\n]*transport=tls`);
      const { run, callId: ringing } = inboundCall(dids[0]!, sipPortB);
      const callId = await ringing;
      await h.call(h.client.answerInboundCall, { accountId: account, callId });
      const done = await finished(run);
      // The phone's SRTP answer reached the trunk as plain RTP.
      expect(logged(done, "profile")).toBe("RTP/AVP");
      expect(srtpInvites(String.raw`[^\n]*transport=tls`), diagnosis()).toBe(before + 1);
      expect(await endedCall(h, account, callId, 25_000)).toMatchObject({
        status: "completed",
        hangupCause: "normal_clearing",
        sipCode: 200,
      });
      await invitedThroughEdgeBy(callId, sipPortA);
    });

    it("answers OPTIONS 503 with Retry-After while a replica drains, and the edge's dispatcher takes it out", async () => {
      expect(await optionsTo(sipPortB)).toMatchObject({ status: 200 });
      // A live call (ringing, the account not answering yet) keeps B draining.
      const { run, callId: ringing } = inboundCall(dids[1]!, sipPortA);
      const callId = await ringing;
      const stopping = b.stop({ callDrainMs: 30_000 });
      const replicaB = `sip:${host}:${sipPortB}`;
      let probe: SipResponse | undefined;
      let destinations: { uri: string; flags: string }[];
      try {
        probe = await optionsTo(sipPortB);
        // `I…`: inactive (its probes answered 503); A stays active.
        destinations = await eventually(
          () => edge.destinations(),
          (list) => list.find((d) => d.uri === replicaB)?.flags.startsWith("I") === true,
          10_000,
        );
      } finally {
        // The call goes on (A INVITEs the phone) and ends; then B's drain is over.
        await h.call(h.client.answerInboundCall, { accountId: account, callId });
        await finished(run);
        await stopping;
      }
      expect(probe).toMatchObject({ status: 503 });
      expect(probe!.headers["retry-after"]).toBe("30");
      expect(destinations.find((d) => d.uri === replicaB)?.flags).toMatch(/^I/);
      expect(destinations.find((d) => d.uri === `sip:${host}:${sipPortA}`)?.flags).toBe("AP");
      expect(await endedCall(h, account, callId, 25_000)).toMatchObject({ status: "completed" });
    });
  },
);
