import { wire } from "@switchboard/proto";
import { testDatabaseKinds } from "@switchboard/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  freeSipPort,
  startBaresip,
  startSippServer,
  type Baresip,
} from "@switchboard/test-support/sip-peers";
import { eventually, startServiceHarness, type ServiceHarness } from "./harness.js";
import { skipWithoutTools } from "@switchboard/test-support/tools";

const account = "acct_sip_recovery";
const host = "127.0.0.1";
const postgres = testDatabaseKinds.find((kind) => kind.name === "postgres")!;

/**
 * The sip carrier across a restart of call-control (real PostgreSQL, real peers on loopback):
 * the process that comes back at the same SIP address CANCELs a setup the previous one left
 * half done (its client transactions died with it), and carries on a call that was answered
 * (the dialogs are in the database).
 */
describe.skipIf(skipWithoutTools(import.meta.url, ["sipp", "baresip"]))(
  "outbound SIP calls across a restart of call-control",
  () => {
    let h: ServiceHarness;
    let from: string;
    let trunkPort: number;
    let seatId: string;
    let phone: Baresip;
    let answeringSeatId: string;
    let answeringPhone: Baresip;

    beforeAll(async () => {
      const sipPort = await freeSipPort();
      trunkPort = await freeSipPort();
      h = await startServiceHarness(postgres, {
        VOICE_CARRIER: "sip",
        SIP_LISTEN: `${host}:${sipPort}`,
        SIP_DOMAIN: host,
        SIP_DIGEST_ALGORITHMS: "MD5",
        SIP_TRUNK_URI: `sip:${host}:${trunkPort}`,
      });
      await h.call(h.client.createAgent, { accountId: account, name: "night-shift" });
      from = await h.assignNumber(account);
      const created = await h.call(h.client.createSeat, {
        accountId: account,
        name: "desk",
        maxConcurrentCalls: 5,
      });
      seatId = created.seat!.id;
      const answering = await h.call(h.client.createSeat, {
        accountId: account,
        name: "desk answering",
        maxConcurrentCalls: 5,
      });
      answeringSeatId = answering.seat!.id;
      [phone, answeringPhone] = await Promise.all([
        startBaresip({
          username: seatId,
          password: created.sipPassword,
          registrar: { host, port: sipPort },
          answermode: "manual",
        }),
        startBaresip({
          username: answeringSeatId,
          password: answering.sipPassword,
          registrar: { host, port: sipPort },
          answermode: "auto",
        }),
      ]);
      await eventually(
        async () =>
          (
            await h.pool.query(
              `SELECT 1 FROM call_control.sip_registrations WHERE seat_id = ANY($1::text[])`,
              [[seatId, answeringSeatId]],
            )
          ).rowCount,
        (n) => n === 2,
        15_000,
      );
    }, 60_000);
    afterAll(async () => {
      await phone?.stop();
      await answeringPhone?.stop();
      await h?.stop();
    });

    const get = async (callId: string) => {
      const call = (await h.call(h.client.getCall, { accountId: account, callId })).call!;
      return {
        ...call,
        status: wire.callStatus.spell(call.status),
        hangupCause: call.hangupCause && wire.hangupCause.spell(call.hangupCause),
        hangupSource: call.hangupSource && wire.hangupSource.spell(call.hangupSource),
      };
    };
    const place = async (to: string, seat = seatId) =>
      (
        await h.call(h.client.createOutboundCall, {
          accountId: account,
          to,
          from,
          agent: "night-shift",
          seatId: seat,
          timeoutSeconds: 60,
        })
      ).call!.id;
    const dialogs = async (callId: string) =>
      (
        await h.pool.query<{ leg: string; state: string }>(
          `SELECT leg, state FROM call_control.sip_dialogs WHERE call_id = $1 ORDER BY leg`,
          [callId],
        )
      ).rows;

    it("CANCELs the phone of a setup the previous process left ringing, and fails the call", async () => {
      const callId = await place("+15550108001");
      await eventually(
        async () => phone.output(),
        (output) => output.includes("INVITE sip:"),
        10_000,
      );
      await h.restart();
      const done = await eventually(
        () => get(callId),
        (call) => call.endedAt !== undefined,
        10_000,
      );
      expect(done).toMatchObject({
        status: "failed",
        hangupCause: "network_error",
        hangupSource: "platform",
      });
      expect(await dialogs(callId)).toEqual([{ leg: "phone", state: "terminated" }]);
      const output = await eventually(
        async () => phone.output(),
        (text) => text.includes("CANCEL sip:"),
        10_000,
      );
      expect(output).toContain("CANCEL sip:");
    });

    it("carries an answered call on: the new process takes the trunk's BYE and BYEs the phone", async () => {
      const trunk = await startSippServer({
        scenario: "trunk-answer-bye.xml",
        port: trunkPort,
        fill: { hold: "5000" },
        timeoutMs: 20_000,
      });
      const callId = await place("+15550108002", answeringSeatId);
      await eventually(
        () => get(callId),
        (call) => call.status === "in_progress",
        10_000,
      );
      await h.restart();
      const run = await trunk.done;
      expect(run.code, run.output).toBe(0);
      const done = await eventually(
        () => get(callId),
        (call) => call.endedAt !== undefined,
        10_000,
      );
      expect(done).toMatchObject({
        status: "completed",
        hangupCause: "normal_clearing",
        hangupSource: "callee",
      });
      expect(await dialogs(callId)).toEqual([
        { leg: "phone", state: "terminated" },
        { leg: "trunk", state: "terminated" },
      ]);
      const output = await eventually(
        async () => answeringPhone.output(),
        (text) => text.includes("BYE sip:"),
        10_000,
      );
      expect(output).toContain("BYE sip:");
    });
  },
);
