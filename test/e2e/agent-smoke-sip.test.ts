import type { RunningCallControl } from "@switchboard/call-control";
import { sipCarrierEnv } from "@switchboard/test-support/fixtures/sip";
import { startHairpinTrunk, type HairpinTrunk } from "@switchboard/test-support/hairpin-trunk";
import type { TestPlatform } from "@switchboard/test-support/platform";
import { freeSipPort, runSipp, startSippServer } from "@switchboard/test-support/sip-peers";
import { eventually } from "@switchboard/test-support/waiting";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allStepNames, runSmoke, startSmokePlatform, stepOf } from "./agent-smoke-support.js";
import { skipWithoutTools } from "@switchboard/test-support/tools";

interface Seat {
  id: string;
  name: string;
  sip: { username: string; registered: boolean; password?: string };
}

const host = "127.0.0.1";
const callTo = "+14155550123";

/**
 * POST /api/agent/smoke with voice on the sip carrier, against a carrier trunk that routes a call
 * to one of the platform's numbers back in (a hairpin) and answers any other number itself. The
 * smoke seat's phone is SIPp, registered with the seat's rotated credentials, answering every
 * call. calls.outbound rings the phone, then the trunk, which answers; calls.inbound calls the
 * smoke's own number, which comes back in as an inbound call and is answered on the phone.
 */
describe.skipIf(skipWithoutTools(import.meta.url, ["sipp"]))(
  "the agent smoke on the sip carrier",
  () => {
    let p: TestPlatform;
    let trunk: HairpinTrunk | undefined;
    let trunkPort: number;

    beforeAll(async () => {
      trunkPort = await freeSipPort();
      p = await startSmokePlatform("postgres", {
        env: { VOICE_CARRIER: "sip", SMOKE_CALL_TO: callTo },
        serviceEnv: sipCarrierEnv(trunkPort),
      });
    }, 60_000);
    afterAll(async () => {
      await trunk?.stop();
      await p?.stop();
    });

    it("skips the calls until a phone is registered as the smoke's seat, then both pass through the trunk", async () => {
      const token = await p.token();
      const first = await runSmoke(p, token);
      expect(first.response.status).toBe(200);
      for (const name of ["calls.outbound", "calls.inbound"]) {
        const skipped = stepOf(first.body, name);
        expect(skipped.status, name).toBe("skipped");
        expect(skipped.detail).toMatch(
          /no phone is registered as the smoke's seat .*rotate-credentials/,
        );
      }

      const seats = await p.request("/v1/api/seats?limit=100", { token });
      const seat = ((await seats.json()) as { data: Seat[] }).data.find((s) => s.name === "smoke");
      expect(seat).toBeDefined();
      const rotated = await p.request(`/v1/api/seats/${seat!.id}/sip/rotate-credentials`, {
        method: "POST",
        token,
      });
      expect(rotated.status).toBe(200);
      const { sip } = (await rotated.json()) as Seat;
      const callControl = p.platform.services["call-control"]!.instance as RunningCallControl;
      const sipPort = callControl.sip!.endpoint.transport.port;
      const phonePort = await freeSipPort();
      const registered = await runSipp({
        scenario: "phone-register.xml",
        target: { host, port: sipPort },
        port: phonePort,
        keys: { user: sip.username, domain: host },
        args: ["-au", sip.username, "-ap", sip.password!],
      });
      expect(registered.code, registered.output).toBe(0);
      const answered = await eventually(
        async () =>
          ((await (await p.request(`/v1/api/seats/${seat!.id}`, { token })).json()) as Seat).sip
            .registered,
        (r) => r,
        20_000,
      );
      expect(answered).toBe(true);

      // Three calls reach the phone: the outbound step's, and the inbound step's two legs.
      const phone = await startSippServer({
        scenario: "phone-answer-any.xml",
        port: phonePort,
        calls: 3,
        timeoutMs: 60_000,
      });
      trunk = await startHairpinTrunk({ target: { host, port: sipPort }, port: trunkPort });
      const { response, body } = await runSmoke(p, token);
      expect(response.status).toBe(200);
      expect(body.steps.map((s) => s.name)).toEqual(allStepNames);
      expect(
        body.steps.filter((s) => s.status !== "pass"),
        JSON.stringify(body.steps),
      ).toEqual([]);
      expect(stepOf(body, "calls.outbound").detail).toMatch(
        new RegExp(`^call_\\S+ to \\${callTo} completed`),
      );
      expect(stepOf(body, "calls.inbound").detail).toMatch(
        /^call_\S+ came back through the trunk, answered by smoke and completed/,
      );
      // The trunk carried both steps' calls to the network: one answered there, one routed back.
      expect(trunk.calls()).toBe(2);
      const run = await phone.done;
      expect(run.code, run.output).toBe(0);
    }, 120_000);
  },
);
