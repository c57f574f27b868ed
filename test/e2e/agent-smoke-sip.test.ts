import type { RunningCallControl } from "@switchboard/call-control";
import {
  freeSipPort,
  startBaresip,
  startSippServer,
  type Baresip,
} from "@switchboard/test-support/sip-peers";
import type { TestPlatform } from "@switchboard/test-support/platform";
import { eventually } from "@switchboard/test-support/waiting";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { allStepNames, runSmoke, startSmokePlatform, stepOf } from "./agent-smoke-support.js";
import { sipCarrierEnv } from "@switchboard/test-support/fixtures/sip";

interface Seat {
  id: string;
  name: string;
  sip: { username: string; registered: boolean; password?: string };
}

const host = "127.0.0.1";
const callTo = "+14155550123";

/**
 * POST /api/agent/smoke with voice on the sip carrier: its outbound call rings the smoke seat's
 * phone (a real baresip in auto-answer, registered with the seat's rotated credentials), then a
 * SIPp trunk, which answers; the smoke hangs up and expects the call completed.
 */
describe("the agent smoke on the sip carrier", () => {
  let p: TestPlatform;
  let trunkPort: number;
  let phone: Baresip | undefined;

  beforeAll(async () => {
    trunkPort = await freeSipPort();
    p = await startSmokePlatform("postgres", {
      env: { VOICE_CARRIER: "sip", SMOKE_CALL_TO: callTo },
      serviceEnv: {
        ...sipCarrierEnv(trunkPort),
      },
    });
  }, 60_000);
  afterAll(async () => {
    await phone?.stop();
    await p?.stop();
  });

  it("skips the call until a phone is registered as the smoke's seat, then places, answers and completes it through the trunk", async () => {
    const token = await p.token();
    const first = await runSmoke(p, token);
    expect(first.response.status).toBe(200);
    const skipped = stepOf(first.body, "calls.outbound");
    expect(skipped.status).toBe("skipped");
    expect(skipped.detail).toMatch(
      /no phone is registered as the smoke's seat .*rotate-credentials/,
    );
    expect(stepOf(first.body, "calls.inbound").status).toBe("skipped");

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
    phone = await startBaresip({
      username: sip.username,
      password: sip.password!,
      registrar: { host, port: callControl.sip!.endpoint.transport.port },
      answermode: "auto",
    });
    const registered = await eventually(
      async () =>
        ((await (await p.request(`/v1/api/seats/${seat!.id}`, { token })).json()) as Seat).sip
          .registered,
      (r) => r,
      20_000,
    );
    expect(registered, phone.output()).toBe(true);

    const trunk = await startSippServer({
      scenario: "trunk-answer.xml",
      port: trunkPort,
      timeoutMs: 30_000,
    });
    const { response, body } = await runSmoke(p, token);
    expect(response.status).toBe(200);
    expect(body.steps.map((s) => s.name)).toEqual(allStepNames);
    const outbound = stepOf(body, "calls.outbound");
    expect(outbound, JSON.stringify(body.steps)).toMatchObject({ status: "pass" });
    expect(outbound.detail).toMatch(new RegExp(`^call_\\S+ to \\${callTo} completed`));
    // On a real network the smoke cannot make the carrier call in.
    expect(stepOf(body, "calls.inbound")).toMatchObject({ status: "skipped" });
    expect(body.steps.filter((s) => !["pass", "skipped"].includes(s.status))).toEqual([]);
    expect(body.steps.filter((s) => s.status === "skipped").map((s) => s.name)).toEqual([
      "calls.inbound",
    ]);
    const run = await trunk.done;
    expect(run.code, run.output).toBe(0);
    // The trunk got the call's PASSporT (RFC 8224 Identity) and the phone's SDP.
    const identity = run.logs.find((line) => line.startsWith("identity="));
    expect(identity, run.logs.join("\n")).toMatch(/^identity=ey[\w-]+\.[\w-]+\.[\w-]+$/);
  }, 120_000);
});
