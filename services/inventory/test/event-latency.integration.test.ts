import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEventBus, createLogger, type EventBus } from "@switchboard/kit";
import { testDatabaseKinds } from "@switchboard/kit/testing";
import { inventory } from "@switchboard/proto";
import { generateNumbers } from "../src/generator.js";
import { startHarness, type Harness } from "./harness.js";

const seed = 31;
const [number] = [...generateNumbers({ count: 500, seed })].map((n) => n.e164);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// The relay's idle poll backs off to 30 s; an event written after a quiet minute must not wait
// for it (the agent smoke's usage.records step has 10 s): the commit wakes the relay.
describe("inventory events after a quiet minute (PostgreSQL)", () => {
  let h: Harness;
  let bus: EventBus;
  beforeAll(async () => {
    bus = createEventBus({ logger: createLogger("inventory-latency-test") });
    h = await startHarness(testDatabaseKinds[0], { seed, count: 500, bus });
  });
  afterAll(async () => {
    await h?.stop();
    await bus?.close();
  });

  it("leaves the outbox within 100 ms of the commit after 60 s idle", async () => {
    await sleep(60_000);
    const hold = await h.call(
      h.client.createHold,
      inventory.CreateHoldRequest.fromPartial({ accountId: "acct_quiet", number }),
    );
    const deadline = Date.now() + 35_000;
    let row: { type: string; pickup_ms: number | null } | undefined;
    while (Date.now() < deadline) {
      ({
        rows: [row],
      } = await h.pool.query<{ type: string; pickup_ms: number | null }>(
        `SELECT type,
                extract(epoch FROM published_at - occurred_at) * 1000 AS pickup_ms
           FROM inventory.outbox WHERE resource_id = $1 ORDER BY sequence DESC LIMIT 1`,
        [hold.hold!.numberId],
      ));
      if (row?.pickup_ms != null) break;
      await sleep(20);
    }
    expect(row?.type).toBe("number.held");
    expect(Number(row?.pickup_ms)).toBeLessThan(100);
  }, 120_000);
});
