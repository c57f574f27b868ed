import { createLogger, createPool, type Pool } from "@switchboard/kit";
import { createRealTestDatabase, type TestDatabase } from "@switchboard/kit/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { migrateCallControl } from "../src/index.js";
import {
  createActionRunner,
  type ActionRunner,
  type DueAction,
} from "../src/scheduler/action-runner.js";
import type { Tx } from "../src/scheduler/tx.js";
import { hearStatements } from "./hear-statements.js";

/**
 * Issue 31: under load the timer runner claims many calls' due timers at once. Each still runs
 * in its own transaction, but those whose handlers only defer their writes (the sandbox
 * network's steps) travel together: one simple query for a share of a claim, not one round trip
 * per timer. A transaction that fails in that query fails alone.
 */
describe("call timers of many calls in one query (real PostgreSQL)", () => {
  let database: TestDatabase;
  let pool: Pool;
  let runner: ActionRunner;
  const sent: string[] = [];
  let unhear: (() => void) | undefined;

  beforeAll(async () => {
    database = await createRealTestDatabase("timerstogether");
    pool = createPool(database.url, { max: 4, name: "timers-together-test" });
    await migrateCallControl(pool);
    await pool.query("CREATE TABLE probe (n int PRIMARY KEY)");
    runner = createActionRunner({
      pool,
      logger: createLogger("timers-together", { level: "silent" }),
      concurrency: 1,
    });
    const n = (payload: Record<string, unknown>) => Number(payload.n);
    runner.register("test.deferred", {
      run: async (tx, action) => tx.defer("INSERT INTO probe (n) VALUES ($1)", [n(action.payload)]),
      defersOnly: true,
    });
    const direct = async (tx: Tx, action: DueAction) => {
      await tx.client.query("INSERT INTO probe (n) VALUES ($1)", [n(action.payload)]);
    };
    runner.register("test.direct", { run: direct });
    // Says it only defers, and sends a statement after all.
    runner.register("test.misdeclared", { run: direct, defersOnly: true });
    runner.register("test.after", {
      defersOnly: true,
      // Writes only where the call's earlier timer (n - 1) committed first.
      run: async (tx, action) =>
        tx.defer(
          "INSERT INTO probe (n) SELECT $1 WHERE EXISTS (SELECT 1 FROM probe WHERE n = $2)",
          [n(action.payload), n(action.payload) - 1],
        ),
    });
    unhear = await hearStatements(pool, (_app, text) => sent.push(text));
  });
  afterAll(async () => {
    unhear?.();
    await runner?.stop();
    await pool?.end();
    await database?.drop();
  });
  beforeEach(async () => {
    await pool.query("TRUNCATE probe, call_control.scheduled_actions");
  });

  /** Due timers, in due order: [call, kind, n]. */
  const due = async (timers: [string, string, number][]) => {
    await pool.query(
      `INSERT INTO call_control.scheduled_actions (call_id, kind, payload, due_at)
       SELECT call_id, kind, jsonb_build_object('n', n), now() - interval '1 minute' + o * interval '1 ms'
         FROM unnest($1::text[], $2::text[], $3::int[]) WITH ORDINALITY AS t (call_id, kind, n, o)`,
      [timers.map((t) => t[0]), timers.map((t) => t[1]), timers.map((t) => t[2])],
    );
  };
  const probes = async () =>
    (await pool.query<{ n: number }>("SELECT n FROM probe ORDER BY n")).rows.map((r) => r.n);
  const left = async () =>
    (
      await pool.query<{ n: number; attempts: number }>(
        "SELECT (payload->>'n')::int AS n, attempts FROM call_control.scheduled_actions ORDER BY id",
      )
    ).rows;
  /** What the runs sent, less the runner's claims and this test's statements. */
  const runs = () =>
    sent.filter((text) => /^BEGIN;/.test(text) || /\bCOMMIT\s*$|^\s*ROLLBACK\s*$/.test(text));
  const count = (text: string, what: RegExp) => text.match(new RegExp(what, "g"))?.length ?? 0;

  it("eight calls' timers that only defer commit in ONE round trip, each in its own transaction", async () => {
    await due(Array.from({ length: 8 }, (_, i) => [`call_${i}`, "test.deferred", i + 1]));
    sent.length = 0;
    expect(await runner.drainDue()).toBe(8);
    const [query, ...more] = runs();
    expect(more).toEqual([]);
    expect(count(query!, /\bBEGIN;/)).toBe(8);
    expect(count(query!, /\bCOMMIT\b/)).toBe(8);
    expect(await probes()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(await left()).toEqual([]);
  });

  it("one that fails in the query fails alone: those before it committed, those after run again", async () => {
    await pool.query("INSERT INTO probe (n) VALUES (3)");
    await due([
      ["call_a", "test.deferred", 1],
      ["call_b", "test.deferred", 2],
      ["call_c", "test.deferred", 3], // a duplicate key: this one fails
      ["call_d", "test.deferred", 4],
      ["call_e", "test.deferred", 5],
    ]);
    sent.length = 0;
    expect(await runner.drainDue()).toBe(5);
    expect(await probes()).toEqual([1, 2, 3, 4, 5]);
    // The failed timer waits for its next try; the others are gone.
    expect(await left()).toEqual([{ n: 3, attempts: 1 }]);
    // The query stopped at the failure; its ROLLBACK; then call_c, call_d, call_e one by one.
    const [together, rollback, ...alone] = runs();
    expect(count(together!, /\bBEGIN;/)).toBe(5);
    expect(rollback).toMatch(/^\s*ROLLBACK\s*$/);
    expect(alone).toHaveLength(4); // call_c's and its ROLLBACK, call_d's, call_e's
  });

  it("a timer whose handler sends a statement of its own commits alone; the others still travel together", async () => {
    await due([
      ["call_a", "test.deferred", 1],
      ["call_b", "test.misdeclared", 2],
      ["call_c", "test.deferred", 3],
    ]);
    sent.length = 0;
    expect(await runner.drainDue()).toBe(3);
    expect(await probes()).toEqual([1, 2, 3]);
    expect(await left()).toEqual([]);
    const [direct, commit, together, ...more] = runs();
    expect(direct).toMatch(/^BEGIN;[\s\S]*INSERT INTO probe/);
    expect(commit).toMatch(/COMMIT$/);
    expect(count(together!, /\bBEGIN;/)).toBe(2);
    expect(more).toEqual([]);
  });

  it("timers whose handlers send statements run as before: each call's on a connection of its own", async () => {
    await due([
      ["call_a", "test.direct", 1],
      ["call_b", "test.direct", 2],
      ["call_c", "test.deferred", 3],
      ["call_c", "test.direct", 4], // one such timer keeps its call's others apart too
    ]);
    sent.length = 0;
    expect(await runner.drainDue()).toBe(4);
    expect(await probes()).toEqual([1, 2, 3, 4]);
    expect(runs().filter((text) => /^BEGIN;/.test(text))).toHaveLength(4);
    expect(runs().every((text) => count(text, /\bBEGIN;/) <= 1)).toBe(true);
  });

  it("one call's timers still run in due order, each after the one before committed", async () => {
    await due([
      ["call_a", "test.deferred", 10],
      ["call_b", "test.deferred", 20],
      ["call_a", "test.after", 11],
      ["call_b", "test.after", 21],
    ]);
    expect(await runner.drainDue()).toBe(4);
    expect(await probes()).toEqual([10, 11, 20, 21]);
  });
});
