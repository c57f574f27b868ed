import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestPlatform } from "@switchboard/test-support/platform";
import {
  activeHolds,
  allStepNames,
  runSmoke,
  smokeTimeoutMs,
  startSmokePlatform,
} from "./agent-smoke-support.js";

/** The embedded mode (PGlite, in-process queue and buckets) passes the same smoke. */
describe("the agent smoke in the embedded mode (PGlite, in-process queue)", () => {
  let p: TestPlatform;
  let token: string;

  beforeAll(async () => {
    p = await startSmokePlatform("pglite");
    token = await p.token();
  });
  afterAll(async () => p?.stop());

  it("passes with every step passing and leaves nothing held", async () => {
    const started = Date.now();
    const { response, body } = await runSmoke(p, token);
    expect(Date.now() - started).toBeLessThan(smokeTimeoutMs);
    expect(response.status).toBe(200);
    expect(body.steps.map((s) => s.name)).toEqual(allStepNames);
    expect(body.steps.filter((s) => s.status !== "pass")).toEqual([]);
    expect(body.status).toBe("pass");
    expect(await activeHolds(p)).toBe(0);
  });
});
