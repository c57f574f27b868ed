import { testDatabaseKinds } from "@switchboard/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  freeSipPort,
  runSipp,
  startBaresip,
  type Baresip,
} from "@switchboard/test-support/sip-peers";
import type { RunningCallControl } from "../src/server.js";
import {
  endedCall,
  eventually,
  inboundCallTo,
  routedSipSeat,
  startServiceHarness,
  type ServiceHarness,
} from "./harness.js";
import { skipWithoutTools } from "@switchboard/test-support/tools";

const account = "acct_sip_replicas";
const host = "127.0.0.1";
const postgres = testDatabaseKinds.find((kind) => kind.name === "postgres")!;

/**
 * Inbound SIP calls with two call-control replicas on one database (real PostgreSQL, real peers
 * on loopback): the trunk's INVITE reaches replica A, whose timers are stopped, so the answer
 * and the ring timeout run in replica B, which has no server transaction of that INVITE and
 * answers the trunk statelessly from the trunk leg's row (docs/api.md "Several replicas"); a
 * ringing call outlives a restart of A for the same reason.
 */
describe.skipIf(skipWithoutTools(import.meta.url, ["sipp", "baresip"]))(
  "inbound SIP calls answered by another replica",
  () => {
    let h: ServiceHarness;
    let b: RunningCallControl;
    let sipPortA: number;
    let sipPortB: number;
    let phone: Baresip;
    const dids: string[] = [];

    beforeAll(async () => {
      sipPortA = await freeSipPort();
      sipPortB = await freeSipPort();
      const env = {
        VOICE_CARRIER: "sip",
        SIP_DOMAIN: host,
        SIP_DIGEST_ALGORITHMS: "MD5",
        SIP_TRUNK_URI: `sip:${host}:${await freeSipPort()}`,
      };
      h = await startServiceHarness(postgres, { ...env, SIP_LISTEN: `${host}:${sipPortA}` });
      b = await h.startReplica({ SIP_LISTEN: `${host}:${sipPortB}` });
      // Replica A takes SIP and the API; replica B runs every durable action.
      await h.running.timers.stop();
      const routed = await routedSipSeat(h, account, 3);
      const seatId = routed.seat.id;
      dids.push(...routed.dids);
      phone = await startBaresip({
        username: seatId,
        password: routed.seat.password,
        registrar: { host, port: sipPortA },
        answermode: "auto",
      });
      await eventually(
        async () =>
          (
            await h.pool.query(`SELECT 1 FROM call_control.sip_registrations WHERE seat_id = $1`, [
              seatId,
            ])
          ).rowCount,
        (n) => n === 1,
        15_000,
      );
    }, 60_000);
    afterAll(async () => {
      await phone?.stop();
      await h?.stop();
    });

    const callTo = (did: string) => inboundCallTo(h, did);
    const ended = (callId: string) => endedCall(h, account, callId);

    it("the answer runs in B: B INVITEs the phone and sends the trunk its 200, whose ACK and BYE go to B", async () => {
      const run = runSipp({
        scenario: "inbound-answer.xml",
        target: { host, port: sipPortA },
        keys: { did: dids[0]! },
        fill: { after_ack: "trunk_bye" },
        timeoutMs: 45_000,
      });
      const callId = await callTo(dids[0]!);
      await h.call(h.client.answerInboundCall, { accountId: account, callId });
      const result = await run;
      expect(result.code, result.output).toBe(0);
      expect(result.logs).toContain(`contact=sip:switchboard@${host}:${sipPortB}`);
      expect(await ended(callId)).toMatchObject({
        status: "completed",
        hangupCause: "normal_clearing",
        sipCode: 200,
      });
      const { rows } = await h.pool.query<{ leg: string; acked: boolean; owner_address: string }>(
        `SELECT leg, acked, owner_address FROM call_control.sip_dialogs WHERE call_id = $1 ORDER BY leg`,
        [callId],
      );
      expect(rows).toEqual([
        { leg: "phone", acked: true, owner_address: `${host}:${sipPortB}` },
        { leg: "trunk", acked: true, owner_address: `${host}:${sipPortA}` },
      ]);
      expect(b.sip!.endpoint.transport.port).toBe(sipPortB);
    });

    it("the ring timeout runs in B: B sends the trunk 480 statelessly", async () => {
      const run = runSipp({
        scenario: "inbound-refused.xml",
        target: { host, port: sipPortA },
        keys: { did: dids[1]! },
        fill: { status: "480" },
        timeoutMs: 45_000,
      });
      const callId = await callTo(dids[1]!);
      await h.pool.query(
        "UPDATE call_control.scheduled_actions SET due_at = now() WHERE call_id = $1 AND kind = 'call.timeout'",
        [callId],
      );
      const result = await run;
      expect(result.code, result.output).toBe(0);
      expect(await ended(callId)).toMatchObject({
        status: "no_answer",
        hangupCause: "timeout",
        sipCode: 480,
      });
    });

    it("a ringing call outlives a restart of the replica that took the INVITE, and is answered after it", async () => {
      const run = runSipp({
        scenario: "inbound-answer.xml",
        target: { host, port: sipPortA },
        keys: { did: dids[2]! },
        fill: { after_ack: "trunk_bye" },
        timeoutMs: 45_000,
      });
      const callId = await callTo(dids[2]!);
      await h.restart();
      await h.call(h.client.answerInboundCall, { accountId: account, callId });
      const result = await run;
      expect(result.code, result.output).toBe(0);
      expect(await ended(callId)).toMatchObject({
        status: "completed",
        hangupCause: "normal_clearing",
        sipCode: 200,
      });
      const { rowCount } = await h.pool.query(
        `SELECT 1 FROM call_control.calls WHERE to_number = $1`,
        [dids[2]],
      );
      expect(rowCount).toBe(1);
    });
  },
);
