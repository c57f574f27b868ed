import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClientReadableStream, ServiceError } from "@grpc/grpc-js";
import { status } from "@grpc/grpc-js";
import { openServerStream } from "@switchboard/kit";
import { testDatabaseKinds } from "@switchboard/kit/testing";
import { inventory } from "@switchboard/proto";
import { WATCH_HEARTBEAT_MS } from "../src/number-owner-watch.js";
import { startHarness, type Harness } from "./harness.js";

const accountId = "acct_01jd0000000000000000000002";
const seatId = "seat_01jd0000000000000000000001";

/** A watcher's stream, and what it heard. */
interface Watching {
  stream: ClientReadableStream<inventory.WatchNumberOwnersResponse>;
  heard: inventory.WatchNumberOwnersResponse[];
  ended: Promise<ServiceError | undefined>;
}

async function watch(h: Harness, actingFor: { accountId?: string } = {}): Promise<Watching> {
  const stream = await openServerStream(
    "inventory",
    h.client,
    h.client.watchNumberOwners,
    {},
    {
      actingFor,
    },
  );
  const heard: inventory.WatchNumberOwnersResponse[] = [];
  stream.on("data", (message: inventory.WatchNumberOwnersResponse) => heard.push(message));
  const ended = new Promise<ServiceError | undefined>((resolve) => {
    stream.on("error", resolve);
    stream.on("end", () => resolve(undefined));
  });
  return { stream, heard, ended };
}

/** Waits (up to 5 s) until `check` holds. */
async function until(check: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const changes = (w: Watching) => w.heard.filter((m) => !m.listening).map((m) => m.number);
const listenings = (w: Watching) => w.heard.filter((m) => m.listening).length;

/**
 * WatchNumberOwners on real PostgreSQL: `listening` once the inventory LISTENs, then the number of
 * every change of its owner or seat (assignment, a seat moved, a release; not a hold), a
 * heartbeat each second, and the end of every stream when the LISTEN connection is lost.
 */
describe("WatchNumberOwners on PostgreSQL", () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness(testDatabaseKinds[0], { count: 200 });
  });
  afterAll(async () => h?.stop());

  const hold = async (number: string) =>
    (await h.call(h.client.createHold, { accountId, number, ttlSeconds: 600 })).hold!;
  const available = async (limit: number) =>
    (
      await h.call(
        h.client.searchNumbers,
        inventory.SearchNumbersRequest.fromPartial({ accountId, country: "US", limit }),
      )
    ).numbers.map((n) => n.number);

  it("tells each watcher of an assignment, a seat moved and a release, and not of a hold", async () => {
    const [first, second] = await Promise.all([watch(h), watch(h)]);
    await until(() => listenings(first) > 0 && listenings(second) > 0, "listening");
    const [number] = await available(1);
    const held = await hold(number!);
    await h.call(h.client.assignHold, { accountId, holdId: held.id, seatId });
    await h.pool.query("UPDATE inventory.numbers SET seat_id = NULL WHERE e164 = $1", [number]);
    await h.call(h.client.releaseNumber, { accountId, numberId: number! });
    for (const w of [first, second]) {
      await until(() => changes(w).length === 3, "three changes");
      expect(changes(w)).toEqual([number, number, number]);
      w.stream.cancel();
    }
  });

  it("beats every second while nothing changes", async () => {
    const w = await watch(h);
    await until(() => listenings(w) > 0, "listening");
    const before = listenings(w);
    await new Promise((resolve) => setTimeout(resolve, WATCH_HEARTBEAT_MS * 2.5));
    expect(listenings(w) - before).toBeGreaterThanOrEqual(2);
    expect(changes(w)).toEqual([]);
    w.stream.cancel();
  });

  it("refuses a watcher acting for an account", async () => {
    const w = await watch(h, { accountId });
    expect((await w.ended)?.code).toBe(status.PERMISSION_DENIED);
    expect(w.heard).toEqual([]);
  });

  it("ends every stream when its LISTEN connection is lost, and listens again for the next", async () => {
    const w = await watch(h);
    await until(() => listenings(w) > 0, "listening");
    await h.pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND query LIKE 'LISTEN "inventory_number_owner"%'`,
    );
    expect((await w.ended)?.code).toBe(status.UNAVAILABLE);
    // Reconnected (1 s later): the next watcher hears `listening`, then the changes.
    const next = await watch(h);
    await until(() => listenings(next) > 0, "listening again");
    const [number] = await available(1);
    const held = await hold(number!);
    await h.call(h.client.assignHold, { accountId, holdId: held.id });
    await until(() => changes(next).includes(number!), "the change");
    next.stream.cancel();
  });
});

describe("WatchNumberOwners on PGlite", () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness(testDatabaseKinds[1], { count: 50 });
  });
  afterAll(async () => h?.stop());

  it("never says `listening`: PGlite delivers no notifications, so nothing may be remembered", async () => {
    const w = await watch(h);
    await new Promise((resolve) => setTimeout(resolve, WATCH_HEARTBEAT_MS * 1.5));
    expect(w.heard).toEqual([]);
    w.stream.cancel();
  });
});
