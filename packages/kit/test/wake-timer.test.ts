import { describe, expect, it } from "vitest";
import { createWakeTimer } from "../src/wake-timer.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("createWakeTimer", () => {
  it("runs at the earliest time asked, once", async () => {
    const runs: number[] = [];
    const start = Date.now();
    const timer = createWakeTimer(async () => {
      runs.push(Date.now() - start);
    });
    timer.armAt(start + 5_000);
    timer.armAt(start + 40);
    timer.armAt(start + 120);
    // The earliest time replaced the later one, and a later one did not replace it.
    await expect.poll(() => runs.length, { timeout: 3_000 }).toBe(1);
    expect(runs[0]).toBeGreaterThanOrEqual(35);
    await sleep(150);
    await timer.stop();
    expect(runs).toHaveLength(1);
  });

  it("goes round again for a time that came during a run, never two runs at once", async () => {
    let inFlight = 0;
    let most = 0;
    let rounds = 0;
    let release: () => void = () => undefined;
    const timer = createWakeTimer(async (again) => {
      do {
        inFlight += 1;
        most = Math.max(most, inFlight);
        rounds += 1;
        if (rounds === 1) await new Promise<void>((resolve) => (release = resolve));
        inFlight -= 1;
      } while (again());
    });
    timer.armAt(Date.now());
    await sleep(20);
    timer.armAt(Date.now());
    await sleep(20);
    expect(rounds).toBe(1);
    release();
    await expect.poll(() => rounds).toBe(2);
    expect(most).toBe(1);
    await timer.stop();
  });

  it("runs nothing once stopped", async () => {
    let runs = 0;
    const timer = createWakeTimer(async () => {
      runs += 1;
    });
    timer.armAt(Date.now() + 20);
    await timer.stop();
    timer.armAt(Date.now());
    await sleep(60);
    expect(runs).toBe(0);
  });
});
