import { metricsRegistry } from "@switchboard/kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SipEdge } from "@switchboard/test-support/sip-edge";
import {
  freeSipPort,
  runSipp,
  startBaresip,
  type Baresip,
} from "@switchboard/test-support/sip-peers";
import type { RunningCallControl } from "../src/server.js";
import { startEdgeWithReplicas } from "./sip-edge-replicas.js";
import {
  endedCall,
  eventually,
  inboundCallTo,
  phoneLegOf,
  routedSipSeat,
  type ServiceHarness,
} from "./harness.js";
import { skipWithoutTools } from "@switchboard/test-support/tools";

const account = "acct_sip_edge";
const host = "127.0.0.1";

/** Final responses call-control's SIP endpoints (both replicas, this process) gave REGISTERs. */
async function registerResponses(): Promise<number> {
  const text = await metricsRegistry.getSingleMetricAsString("sip_responses_total");
  let total = 0;
  for (const match of text.matchAll(/sip_responses_total\{method="REGISTER",[^}]*\} (\d+)/g)) {
    total += Number(match[1]);
  }
  return total;
}

/**
 * The chart's SIP edge (real kamailio with the chart's kamailio.cfg) in front of two call-control
 * replicas on one database (docs/operations.md "The SIP edge"): a baresip phone registers over
 * TCP through the edge, and each replica in turn INVITEs it for an inbound call; the edge's
 * dispatcher probes both replicas with OPTIONS; a REGISTER flood and a password guesser are
 * dropped at the edge.
 */
describe.skipIf(skipWithoutTools(import.meta.url, ["kamailio", "sipp", "baresip"]))(
  "the SIP edge in front of two call-control replicas",
  () => {
    let h: ServiceHarness;
    let b: RunningCallControl;
    let edge: SipEdge;
    let phone: Baresip;
    let seatId: string;
    let sipPortA: number;
    let sipPortB: number;
    let phonePort: number;
    let corePort: number;
    const dids: string[] = [];
    const authFailures = 3;
    const requestsPerTwoSeconds = 20;

    beforeAll(async () => {
      ({ h, b, edge, sipPortA, sipPortB, phonePort, corePort } = await startEdgeWithReplicas(
        { SIP_TRUNK_URI: `sip:${host}:${await freeSipPort()}` },
        { requestsPerTwoSeconds, authFailures, banSeconds: 120 },
      ));
      const routed = await routedSipSeat(h, account, 2);
      seatId = routed.seat.id;
      dids.push(...routed.dids);
      phone = await startBaresip({
        username: seatId,
        password: routed.seat.password,
        registrar: { host, port: phonePort },
        transport: "tcp",
        answermode: "auto",
        // No refresh during the suite: every REGISTER call-control answers is one the test sent.
        regint: 600,
      });
    }, 90_000);
    afterAll(async () => {
      await phone?.stop();
      await edge?.stop();
      await h?.stop();
    });

    const registration = () =>
      eventually(
        async () =>
          (
            await h.pool.query<{
              transport: string;
              source_address: string;
              source_port: number;
              path: string[];
            }>(
              `SELECT transport, source_address, source_port, path
               FROM call_control.sip_registrations WHERE seat_id = $1`,
              [seatId],
            )
          ).rows,
        (rows) => rows.length === 1,
        20_000,
      ).then((rows) => rows[0]!);

    const callTo = (did: string) => inboundCallTo(h, did);
    const ended = (callId: string) => endedCall(h, account, callId, 25_000);

    const phoneLeg = (callId: string) => phoneLegOf(h, callId);

    /** The trunk (SIPp from 127.0.0.1) calls `did` at `replicaPort`; the account answers. */
    const inboundCall = async (did: string, replicaPort: number) => {
      const run = runSipp({
        scenario: "inbound-answer.xml",
        target: { host, port: replicaPort },
        keys: { did },
        fill: { after_ack: "trunk_bye" },
        timeoutMs: 45_000,
      });
      const callId = await callTo(did);
      await h.call(h.client.answerInboundCall, { accountId: account, callId });
      const result = await run;
      const diagnosis = `--- phone\n${phone.output().slice(-6000)}\n--- edge\n${edge.output().slice(-6000)}`;
      expect(result.code, `${result.output}\n${diagnosis}`).toBe(0);
      expect(await ended(callId)).toMatchObject({
        status: "completed",
        hangupCause: "normal_clearing",
        sipCode: 200,
      });
      return callId;
    };

    it("probes both replicas with OPTIONS and finds them up", async () => {
      // `AP`: active, and its OPTIONS probes answered (`AX` until the first one is).
      const destinations = await eventually(
        () => edge.destinations(),
        (list) => list.length === 2 && list.every((d) => d.flags === "AP"),
        15_000,
      );
      expect(destinations.map((d) => d.uri).sort()).toEqual(
        [`sip:${host}:${sipPortA}`, `sip:${host}:${sipPortB}`].sort(),
      );
      expect(destinations.every((d) => d.flags === "AP")).toBe(true);
    });

    it("registers a phone on TCP through the edge, with the edge's Path holding its connection", async () => {
      const row = await registration();
      // call-control heard it from the edge's core socket, over UDP…
      expect(row).toMatchObject({ transport: "udp", source_address: host, source_port: corePort });
      // …with the edge's Path: its core address, and the phone's TCP connection as `received`.
      expect(row.path).toHaveLength(1);
      expect(row.path[0]).toMatch(new RegExp(`^<sip:${host}:${corePort};[^>]*>$`));
      expect(row.path[0]).toContain(";lr");
      expect(row.path[0]).toMatch(new RegExp(`;received=sip:${host}:\\d+%3[Bb]transport%3[Dd]tcp`));
    });

    it("replica B reaches the phone through the edge for an inbound call taken by A", async () => {
      await registration();
      // Only B runs durable actions: the answer INVITEs the phone from B.
      await h.running.timers.stop();
      const callId = await inboundCall(dids[0]!, sipPortA);
      const leg = await phoneLeg(callId);
      expect(leg).toMatchObject({
        owner_address: `${host}:${sipPortB}`,
        flow_address: host,
        flow_port: corePort,
        acked: true,
      });
      // The dialog's route set is the edge's Record-Route (the BYE went through it too).
      expect(leg!.route_set.length).toBeGreaterThan(0);
      expect(leg!.route_set.join(",")).toContain(`${host}:${corePort}`);
      await eventually(
        async () => phone.output(),
        (output) => (output.match(/BYE sip:/g) ?? []).length >= 1,
        10_000,
      );
    });

    it("replica A reaches the same phone through the edge for an inbound call taken by B", async () => {
      // A new A (its timers running) and B's timers stopped: the answer INVITEs the phone from A.
      await h.restart();
      await b.timers.stop();
      const callId = await inboundCall(dids[1]!, sipPortB);
      expect(await phoneLeg(callId)).toMatchObject({
        owner_address: `${host}:${sipPortA}`,
        flow_address: host,
        flow_port: corePort,
        acked: true,
      });
      // Both INVITEs reached the phone on its one TCP connection to the edge.
      expect((phone.output().match(/INVITE sip:/g) ?? []).length).toBeGreaterThanOrEqual(2);
    });

    it("drops a REGISTER flood from one source at the edge: few reach call-control, then none", async () => {
      const before = await registerResponses();
      const sent = 1000;
      const flood = await runSipp({
        scenario: "edge-register-flood.xml",
        target: { host, port: phonePort },
        localHost: "127.0.0.2",
        keys: { user: seatId, domain: host },
        calls: sent,
        rate: 500,
        timeoutMs: 30_000,
      });
      expect(flood.code, flood.output).toBe(0);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const reached = (await registerResponses()) - before;
      // pike lets a source's first requests through, then the ban drops the rest. Its blocking
      // limit for an IPv4 source is between the density and 3 × it (pike's documentation,
      // reqs_density_per_unit): 45 of 1,000 reached call-control in one run under load.
      expect(reached).toBeGreaterThan(0);
      expect(reached).toBeLessThanOrEqual(3 * requestsPerTwoSeconds);
      expect(edge.output()).toContain("edge: flood from 127.0.0.2:");
      // Banned: even one REGISTER, well below the rate, is dropped unanswered.
      const after = await runSipp({
        scenario: "phone-register.xml",
        target: { host, port: phonePort },
        localHost: "127.0.0.2",
        keys: { user: seatId, domain: host },
        timeoutMs: 3_000,
      });
      expect(after.code).not.toBe(0);
      expect((await registerResponses()) - before).toBe(reached);
    });

    it("bans a source after too many failed digests", async () => {
      const guess = (calls: number, timeoutMs: number) =>
        runSipp({
          scenario: "edge-register-wrong-digest.xml",
          target: { host, port: phonePort },
          localHost: "127.0.0.3",
          keys: { user: seatId, domain: host },
          args: ["-au", seatId, "-ap", "sbsip_wrongwrongwrongwrongwrong"],
          calls,
          rate: 2,
          timeoutMs,
        });
      const refused = await guess(authFailures, 20_000);
      expect(refused.code, refused.output).toBe(0);
      const before = await registerResponses();
      const banned = await guess(1, 3_000);
      expect(banned.code, edge.output().slice(-6000)).not.toBe(0);
      expect(edge.output()).toContain(
        `edge: ${authFailures} failed digests from 127.0.0.3: banned`,
      );
      expect(await registerResponses()).toBe(before);
      // The phone on 127.0.0.1 is still registered through the edge.
      expect((await registration()).path).toHaveLength(1);
    });
  },
);
