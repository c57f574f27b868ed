import { randomBytes } from "node:crypto";
import pg from "pg";
import { appendEvent, withTransaction } from "@switchboard/kit";
import { requireTestRedis } from "@switchboard/kit/events/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { account, startHarness, waitFor, type Harness } from "./support/harness.js";

// npm test needs Redis (README): a Redis that is down fails this suite, never skips it.
await requireTestRedis();

/**
 * The events of one relay batch reach fan-out as one job and are all taken at once: the webhook
 * service keeps them for GET /api/events in ONE insert, however many the worker's concurrency.
 */
describe("a relay batch's events kept in one statement (PostgreSQL + BullMQ)", () => {
  let h: Harness;
  const proto = pg.Client.prototype as unknown as {
    query: (this: pg.Client, ...args: unknown[]) => unknown;
  };
  const original = proto.query;
  let keeps = 0;

  beforeAll(async () => {
    h = await startHarness({ mode: "postgres+bullmq" });
    proto.query = function query(this: pg.Client, ...args: unknown[]) {
      const first = args[0];
      const text = typeof first === "string" ? first : (first as { text?: string })?.text;
      if (/^\s*INSERT INTO webhook\.events/.test(text ?? "")) keeps += 1;
      return original.apply(this, args);
    };
  });
  afterAll(async () => {
    proto.query = original;
    await h?.stop();
  });

  it("30 events committed together are kept by one insert", async () => {
    const resourceId = `num_${randomBytes(4).toString("hex")}`;
    keeps = 0;
    // One transaction: its commit wakes the relay, which takes the 30 as one batch.
    const ids = await withTransaction(h.pool, async (client) => {
      const appended: string[] = [];
      for (let i = 0; i < 30; i += 1) {
        const event = await appendEvent(client, "producer", {
          type: "number.held",
          accountId: account,
          resourceId,
          data: { number: `+1415555${String(i).padStart(4, "0")}` },
        });
        appended.push(event.id);
      }
      return appended;
    });
    const kept = async () =>
      (
        await h.pool.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM webhook.events WHERE id = ANY($1::text[])",
          [ids],
        )
      ).rows[0]!.n;
    await waitFor(async () => (await kept()) === 30, 10_000, "30 events kept");
    expect(keeps).toBe(1);
  });
});
