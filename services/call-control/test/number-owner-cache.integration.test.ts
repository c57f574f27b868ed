import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callUnary, createClient, metricsRegistry } from "@switchboard/kit";
import { testDatabaseKinds } from "@switchboard/kit/testing";
import { inventory } from "@switchboard/proto";
import { connectInventory, type NumberDirectory } from "../src/inventory-directory.js";
import { startServiceHarness, type ServiceHarness } from "./harness.js";
import { eventually } from "@switchboard/test-support/waiting";

const accountId = "acct_01jd00000000000000000000c1";
const seatA = "seat_01jd00000000000000000000a1";
const seatB = "seat_01jd00000000000000000000b1";

/** FindNumberOwner calls the inventory answered in this process (its gRPC server metrics). */
async function ownerReads(): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric("grpc_server_handled_total")?.get();
  return (metric?.values ?? [])
    .filter((v) => v.labels.method === "FindNumberOwner")
    .reduce((sum, v) => sum + v.value, 0);
}

/** Whether `check` holds within `withinMs` (polled). */
const within = (withinMs: number, check: () => Promise<boolean>) =>
  eventually(check, (held) => held, withinMs);

/** How many reads `times` lookups of `e164` through `directory` took. */
async function readsFor(directory: NumberDirectory, e164: string, times: number) {
  const before = await ownerReads();
  for (let i = 0; i < times; i += 1) await directory.owned(accountId, e164);
  return (await ownerReads()) - before;
}

/**
 * The number owners two call-control replicas remember (real PostgreSQL, a real inventory and
 * its WatchNumberOwners stream): each reads a number once while watching; a release or a seat
 * moved reaches both within a second; while the watch is down every lookup reads, and once it
 * is back they remember again.
 */
describe("the number owners each call-control replica remembers", () => {
  let h: ServiceHarness;
  let replicas: NumberDirectory[];
  let inv: inventory.InventoryServiceClient;

  beforeAll(async () => {
    h = await startServiceHarness(testDatabaseKinds[0]);
    inv = createClient(inventory.InventoryServiceClient, h.inventoryAddress);
    replicas = [1, 2].map(() =>
      connectInventory(h.inventoryAddress, { deadlineMs: 5_000, rewatchMs: 200 }),
    );
  });
  afterAll(async () => {
    for (const replica of replicas ?? []) replica.close();
    inv?.close();
    await h?.stop();
  });

  const remembering = (directory: NumberDirectory, e164: string) =>
    within(5_000, async () => (await readsFor(directory, e164, 3)) === 0);

  it("reads a number once on each replica while watching", async () => {
    const number = await h.assignNumber(accountId, seatA);
    for (const replica of replicas) {
      expect(await remembering(replica, number)).toBe(true);
      expect(await replica.owned(accountId, number)).toMatchObject({ number, seatId: seatA });
      expect(await replica.ownerOf(number)).toBe(accountId);
      expect(await replica.owned("acct_01jd00000000000000000000c2", number)).toBeUndefined();
      expect(await readsFor(replica, number, 5)).toBe(0);
    }
  });

  it("tells both replicas of a seat moved and of a release within a second", async () => {
    const number = await h.assignNumber(accountId, seatA);
    for (const replica of replicas) expect(await remembering(replica, number)).toBe(true);

    await h.inventoryPool.query("UPDATE inventory.numbers SET seat_id = $2 WHERE e164 = $1", [
      number,
      seatB,
    ]);
    for (const replica of replicas) {
      const moved = await within(1_000, async () => {
        return (await replica.owned(accountId, number))?.seatId === seatB;
      });
      expect(moved).toBe(true);
    }

    await callUnary("inventory", inv, inv.releaseNumber, { accountId, numberId: number });
    for (const replica of replicas) {
      const released = await within(1_000, async () => {
        return (await replica.owned(accountId, number)) === undefined;
      });
      expect(released).toBe(true);
      expect(await replica.ownerOf(number)).toBeUndefined();
    }
  });

  it("reads on every lookup while the watch is down, and remembers again once it is back", async () => {
    const number = await h.assignNumber(accountId);
    for (const replica of replicas) expect(await remembering(replica, number)).toBe(true);
    // The inventory loses its LISTEN: it ends every watch, since a change could pass unheard.
    await h.inventoryPool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND query LIKE 'LISTEN "inventory_number_owner"%'`,
    );
    for (const replica of replicas) {
      expect(await within(1_000, async () => (await readsFor(replica, number, 2)) === 2)).toBe(
        true,
      );
    }
    // A change made meanwhile is seen at once (read, or told once the watch is back).
    await h.inventoryPool.query("UPDATE inventory.numbers SET seat_id = $2 WHERE e164 = $1", [
      number,
      seatB,
    ]);
    for (const replica of replicas) {
      expect((await replica.owned(accountId, number))?.seatId).toBe(seatB);
      expect(await remembering(replica, number)).toBe(true);
    }
  });
});
