import { testDatabaseKinds } from "@switchboard/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  freeSipPort,
  runSipp,
  startSippServer,
  type SippRun,
} from "@switchboard/test-support/sip-peers";
import { skipWithoutTools } from "@switchboard/test-support/tools";
import {
  createSipSeat,
  endedCall,
  eventually,
  inboundCallTo,
  spelledCall,
  startServiceHarness,
  type ServiceHarness,
} from "./harness.js";

const account = "acct_sip_ipv6";
const host = "::1";
const postgres = testDatabaseKinds.find((kind) => kind.name === "postgres")!;

/**
 * SIP over IPv6 with real peers on ::1: call-control listens on `[::1]:port`, a SIPp phone
 * registers from ::1 (Request-URI, Via, Contact and To with IPv6 references, digest MD5) and
 * answers the calls' phone legs; the trunk is SIPp at `sip:[::1]:port` (over UDP, then TCP for
 * outbound calls), whose INVITE from ::1 is an inbound call (the trunk's IPv6 address allowed).
 */
describe.skipIf(skipWithoutTools(import.meta.url, ["sipp"]))("SIP over IPv6 (::1)", () => {
  let h: ServiceHarness;
  let sipPort: number;
  let trunkPort: number;
  let from: string;
  let seat: { id: string; password: string };
  let phonePort: number;
  let did: string;

  beforeAll(async () => {
    sipPort = await freeSipPort();
    trunkPort = await freeSipPort();
    h = await startServiceHarness(postgres, {
      VOICE_CARRIER: "sip",
      SIP_LISTEN: `[${host}]:${sipPort}`,
      SIP_DIGEST_ALGORITHMS: "MD5",
      SIP_TRUNK_URI: `sip:[${host}]:${trunkPort}`,
    });
    await h.call(h.client.createAgent, { accountId: account, name: "night-shift" });
    from = await h.assignNumber(account);
    seat = await createSipSeat(h, account, "desk six");
    phonePort = await freeSipPort();
    did = await h.assignNumber(account);
    await h.call(h.client.createRoute, {
      accountId: account,
      name: "main",
      numbers: [did],
      agent: "night-shift",
      seatId: seat.id,
    });
    const registered = await runSipp({
      scenario: "phone-register.xml",
      target: { host, port: sipPort },
      localHost: host,
      port: phonePort,
      keys: { user: seat.id, domain: `[${host}]` },
      args: ["-au", seat.id, "-ap", seat.password],
    });
    expect(registered.code, registered.output).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  const finished = async (run: Promise<SippRun>) => {
    const result = await run;
    expect(result.code, result.output).toBe(0);
    return result;
  };
  const get = (callId: string) => spelledCall(h, account, callId);
  const legs = async (callId: string) =>
    (
      await h.pool.query<{
        leg: string;
        flow_address: string;
        flow_port: number;
        flow_transport: string;
      }>(
        `SELECT leg, flow_address, flow_port, flow_transport FROM call_control.sip_dialogs
         WHERE call_id = $1 ORDER BY leg`,
        [callId],
      )
    ).rows;

  it("registers a phone from ::1 (digest, To sip:<seat>@[::1]): its binding keeps the IPv6 source and contact", async () => {
    const { rows } = await h.pool.query<{
      contact_uri: string;
      source_address: string;
      source_port: number;
      transport: string;
      received_by: string;
    }>(
      `SELECT contact_uri, source_address, source_port, transport, received_by
       FROM call_control.sip_registrations WHERE seat_id = $1`,
      [seat.id],
    );
    expect(rows).toEqual([
      {
        contact_uri: `sip:${seat.id}@[${host}]:${phonePort}`,
        source_address: host,
        source_port: phonePort,
        transport: "udp",
        received_by: `[${host}]:${sipPort}`,
      },
    ]);
  });

  for (const transport of ["udp", "tcp"] as const) {
    it(`calls out to the IPv6 trunk over ${transport}: the phone on ::1 answers, the trunk hangs up`, async () => {
      await h.restart({ SIP_TRUNK_URI: `sip:[${host}]:${trunkPort};transport=${transport}` });
      const phone = await startSippServer({
        scenario: "phone-answer.xml",
        port: phonePort,
        localHost: host,
        timeoutMs: 20_000,
      });
      const trunk = await startSippServer({
        scenario: "trunk-answer-bye.xml",
        port: trunkPort,
        localHost: host,
        transport: transport === "tcp" ? "t1" : "u1",
        fill: { hold: "500" },
        timeoutMs: 20_000,
      });
      const placed = await h.call(h.client.createOutboundCall, {
        accountId: account,
        to: "+15550106001",
        from,
        agent: "night-shift",
        seatId: seat.id,
        timeoutSeconds: 30,
      });
      const callId = placed.call!.id;
      const answered = await eventually(
        () => get(callId),
        (c) => c.status === "in_progress" || c.endedAt !== undefined,
        15_000,
      );
      expect(answered.status).toBe("in_progress");
      expect(await legs(callId)).toEqual([
        { leg: "phone", flow_address: host, flow_port: phonePort, flow_transport: "udp" },
        { leg: "trunk", flow_address: host, flow_port: trunkPort, flow_transport: transport },
      ]);
      await finished(trunk.done);
      await finished(phone.done);
      const ended = await eventually(
        () => get(callId),
        (c) => c.endedAt !== undefined,
        15_000,
      );
      expect(ended).toMatchObject({
        status: "completed",
        hangupCause: "normal_clearing",
        hangupSource: "callee",
      });
    });
  }

  it("takes an inbound call from the trunk's IPv6 address and answers it with the phone's IP6 SDP", async () => {
    await h.restart({ SIP_TRUNK_URI: `sip:[${host}]:${trunkPort}` });
    const phone = await startSippServer({
      scenario: "phone-answer-any.xml",
      port: phonePort,
      localHost: host,
      timeoutMs: 20_000,
    });
    const run = runSipp({
      scenario: "inbound-answer-ipv6.xml",
      target: { host, port: sipPort },
      localHost: host,
      port: trunkPort,
      keys: { did },
      timeoutMs: 30_000,
    });
    const callId = await inboundCallTo(h, did);
    await h.call(h.client.answerInboundCall, { accountId: account, callId });
    const result = await run;
    expect(result.code, result.output).toBe(0);
    expect(result.logs).toContain(`contact=sip:switchboard@[${host}]:${sipPort}`);
    await finished(phone.done);
    expect(await endedCall(h, account, callId)).toMatchObject({
      status: "completed",
      hangupCause: "normal_clearing",
      sipCode: 200,
    });
    expect(await legs(callId)).toEqual([
      { leg: "phone", flow_address: host, flow_port: phonePort, flow_transport: "udp" },
      { leg: "trunk", flow_address: host, flow_port: trunkPort, flow_transport: "udp" },
    ]);
  });
});
