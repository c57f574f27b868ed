import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestSmsc, type TestSmsc } from "@switchboard/test-smsc";
import { smppEnv, smscCredentials } from "@switchboard/test-support/fixtures/smpp";
import type { TestPlatform } from "@switchboard/test-support/platform";
import { allStepNames, runSmoke, startSmokePlatform, stepOf } from "./agent-smoke-support.js";

/** POST /api/agent/smoke with messaging on the smpp carrier: its SMS goes through a real SMSC. */
describe("the agent smoke on the smpp carrier", () => {
  let smsc: TestSmsc;
  let p: TestPlatform;

  beforeAll(async () => {
    smsc = await startTestSmsc({ ...smscCredentials, receiptDelayMs: 50 });
    p = await startSmokePlatform("postgres", {
      env: { CARRIER: "smpp" },
      serviceEnv: smppEnv(smsc),
    });
  });
  afterAll(async () => {
    await p?.stop();
    await smsc?.stop();
  });

  it("passes every step; the message step's SMS is taken by the SMSC and delivered", async () => {
    const token = await p.token();
    const { response, body } = await runSmoke(p, token);
    expect(response.status).toBe(200);
    expect(body.steps.map((s) => s.name)).toEqual(allStepNames);
    expect(body.steps.filter((s) => s.status !== "pass")).toEqual([]);
    const step = stepOf(body, "messages.send");
    expect(step.detail).toMatch(/^msg_\S+ from \+\d+ delivered/);
    const messageId = step.detail?.split(" ")[0];
    const { rows } = await p.pools.messaging!.query<{ provider_message_id: string }>(
      "SELECT provider_message_id FROM messaging.messages WHERE id = $1",
      [messageId],
    );
    const submit = smsc.submits.find((s) => s.messageId === rows[0]?.provider_message_id);
    expect(submit).toMatchObject({ destination: "15550209990", dataCoding: 0 });
    expect(submit?.text).toMatch(/^Switchboard smoke check /);
  });
});
