import { createPool, type Pool } from "@switchboard/kit";
import { createRealTestDatabase, type TestDatabase } from "@switchboard/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateCallControl } from "../src/index.js";
import { inTransaction, type Waker } from "../src/scheduler/tx.js";

const noWake: Waker = { wake: () => undefined };

/**
 * A call-control transaction sends its BEGIN with its first statement and its deferred writes
 * with its COMMIT: fewer round trips, the same transaction — what it wrote commits or rolls
 * back as one, whichever statement fails.
 */
describe("call-control transactions in few round trips (real PostgreSQL)", () => {
  let database: TestDatabase;
  let pool: Pool;
  const sent: string[] = [];
  type Query = (this: unknown, ...args: unknown[]) => unknown;
  let proto: { query: Query };
  let original: Query;

  beforeAll(async () => {
    database = await createRealTestDatabase("txroundtrips");
    pool = createPool(database.url, { max: 2, name: "tx-round-trips-test" });
    await migrateCallControl(pool);
    await pool.query("CREATE TABLE probe (n int PRIMARY KEY)");
    // Every statement the pool's clients send (pg's Client, as the clients are made of).
    const client = await pool.connect();
    let found = Object.getPrototypeOf(client) as object | null;
    while (found && !Object.hasOwn(found, "query")) found = Object.getPrototypeOf(found) as object;
    client.release();
    if (!found) throw new Error("no query method on the pool's clients");
    proto = found as { query: Query };
    original = proto.query;
    proto.query = function query(this: unknown, ...args: unknown[]) {
      sent.push(typeof args[0] === "string" ? args[0] : "?");
      return original.apply(this, args);
    };
  });
  afterAll(async () => {
    proto.query = original;
    await pool?.end();
    await database?.drop();
  });

  const timers = async (callId: string) =>
    (
      await pool.query<{ kind: string }>(
        "SELECT kind FROM call_control.scheduled_actions WHERE call_id = $1 ORDER BY kind",
        [callId],
      )
    ).rows.map((r) => r.kind);
  const probes = async () =>
    (await pool.query<{ n: number }>("SELECT n FROM probe ORDER BY n")).rows.map((r) => r.n);

  it("one statement and deferred writes are two round trips, and commit together", async () => {
    sent.length = 0;
    const n = await inTransaction(pool, noWake, async (tx) => {
      const { rows } = await tx.client.query<{ n: number }>(
        "INSERT INTO probe (n) VALUES ($1) RETURNING n",
        [1],
      );
      await tx.schedule({ callId: "call_a", kind: "test.a" }, { callId: "call_a", kind: "test.b" });
      return rows[0]!.n;
    });
    expect(n).toBe(1);
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatch(/^BEGIN;\s+INSERT INTO probe/);
    expect(sent[1]).toMatch(/INSERT INTO call_control\.scheduled_actions[\s\S]*;\s+COMMIT$/);
    expect(await probes()).toEqual([1]);
    expect(await timers("call_a")).toEqual(["test.a", "test.b"]);
  });

  it("a deferred write that fails at COMMIT rolls back the statements before it", async () => {
    await expect(
      inTransaction(pool, noWake, async (tx) => {
        await tx.client.query("INSERT INTO probe (n) VALUES ($1)", [2]);
        await tx.schedule({ callId: "call_b", kind: "test.a" });
        tx.defer("INSERT INTO probe (n) VALUES ($1)", [1]); // a duplicate key
      }),
    ).rejects.toThrow(/duplicate key/);
    expect(await probes()).toEqual([1]);
    expect(await timers("call_b")).toEqual([]);
  });

  it("a first statement that fails rolls back, and the connection is clean after", async () => {
    await expect(
      inTransaction(pool, noWake, async (tx) => {
        await tx.client.query("INSERT INTO probe (n) VALUES ($1)", [1]);
      }),
    ).rejects.toThrow(/duplicate key/);
    await expect(
      inTransaction(pool, noWake, async () => {
        throw new Error("before any statement");
      }),
    ).rejects.toThrow(/before any statement/);
    // The BEGIN went out with the first statement: what it wrote goes with a later failure.
    await expect(
      inTransaction(pool, noWake, async (tx) => {
        await tx.client.query("INSERT INTO probe (n) VALUES ($1)", [3]);
        throw new Error("after the first statement");
      }),
    ).rejects.toThrow(/after the first statement/);
    await Promise.all(
      [4, 5].map((n) =>
        inTransaction(pool, noWake, (tx) =>
          tx.client.query("INSERT INTO probe (n) VALUES ($1)", [n]),
        ),
      ),
    );
    expect(await probes()).toEqual([1, 4, 5]);
  });

  it("deferred writes alone are one round trip", async () => {
    sent.length = 0;
    await inTransaction(pool, noWake, async (tx) => {
      await tx.schedule({ callId: "call_c", kind: "test.a" });
    });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatch(/^BEGIN;[\s\S]*COMMIT$/);
    expect(await timers("call_c")).toEqual(["test.a"]);
  });
});
