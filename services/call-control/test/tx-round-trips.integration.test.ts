import { createPool, type Pool } from "@switchboard/kit";
import { createRealTestDatabase, type TestDatabase } from "@switchboard/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrateCallControl } from "../src/index.js";
import { inTransaction, type Waker } from "../src/scheduler/tx.js";
import { callEvents, eventually, startServiceHarness, type ServiceHarness } from "./harness.js";
import { hearStatements } from "./hear-statements.js";

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
  let unhear: (() => void) | undefined;

  beforeAll(async () => {
    database = await createRealTestDatabase("txroundtrips");
    pool = createPool(database.url, { max: 2, name: "tx-round-trips-test" });
    await migrateCallControl(pool);
    await pool.query("CREATE TABLE probe (n int PRIMARY KEY)");
    unhear = await hearStatements(pool, (_app, text) => sent.push(text));
  });
  afterAll(async () => {
    unhear?.();
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

/**
 * A sandbox call's life in call-control, statement by statement (issue 31: a call in at most 15
 * round trips through the whole platform, counted by test/e2e/calls-round-trips.test.ts and by
 * `npm run bench:calls` under load; here the part that is call-control's own, exactly). Each
 * timer step — the dial and the sandbox network's ringing, answer and end — is ONE round trip:
 * BEGIN, the step with its event, the timers it sets and drops, the seat it frees and the
 * network's rows, the timer's deletion and COMMIT in one simple query. The placement is two
 * (BEGIN with the call, its dial timer and its seat's claim; its event with the COMMIT), after
 * one read (the agent and the Idempotency-Key's call). Left out: the timer runner's claims and
 * the outbox relay's batches, which serve every call at once (counted per call by the others).
 * Before: 13 (each timer step two round trips, the seat read and claimed on its own).
 */
describe("call-control's round trips per request (real PostgreSQL)", () => {
  const account = "acct_roundtrips";
  let h: ServiceHarness;
  let from: string;
  let unhear: (() => void) | undefined;
  const sent: { app: string | undefined; text: string }[] = [];

  beforeAll(async () => {
    h = await startServiceHarness({ name: "postgres", create: createRealTestDatabase });
    await h.call(h.client.createAgent, { accountId: account, name: "counter" });
    const seatId = (
      await h.call(h.client.createSeat, { accountId: account, name: "desk", maxConcurrentCalls: 5 })
    ).seat!.id;
    from = await h.assignNumber(account, seatId);
    unhear = await hearStatements(h.pool, (app, text) => sent.push({ app, text }));
  });
  afterAll(async () => {
    unhear?.();
    await h?.stop();
  });

  /**
   * The runner's claims and polls and the relay's batches (shared by every call), and this
   * test's own reads of the call's events.
   */
  const shared = (text: string) =>
    /^\s*UPDATE call_control\.scheduled_actions a\b/.test(text) ||
    /SELECT min\(due_at\)/.test(text) ||
    /^\s*SELECT id, type, account_id, resource_id, sequence, data, trace_carrier/.test(text) ||
    /^\s*UPDATE "?call_control"?\.outbox SET published_at/.test(text) ||
    /^\s*SELECT type, sequence, data FROM call_control\.outbox/.test(text) ||
    /^\s*(BEGIN|COMMIT|ROLLBACK)\s*$/.test(text);

  /** Places a sandbox call and waits for its end. */
  const placeCompletedCall = async () => {
    const { call } = await h.call(h.client.createOutboundCall, {
      accountId: account,
      to: "+15550100000",
      from,
      agent: "counter",
    });
    await eventually(
      () => callEvents(h.pool, call!.id),
      (events) => events.some((e) => e.type === "call.completed"),
    );
  };

  /** What the floor's write sends: the agents table's statements and any lock on a key. */
  const agentStatements = () =>
    sent
      .filter((s) => /call_control\.agents|pg_advisory/.test(s.text))
      .map((s) => s.text.replace(/\s+/g, " ").slice(0, 60));

  it("a keyed agent create is one statement; its retry adds one lookup", async () => {
    sent.length = 0;
    const request = { accountId: account, name: "keyed", description: "floor" };
    const headers = { "idempotency-key": "floor-1" };
    const first = await h.call(h.client.createAgent, request, headers);
    expect(agentStatements()).toEqual([expect.stringMatching(/^INSERT INTO call_control\.agents/)]);
    sent.length = 0;
    const again = await h.call(h.client.createAgent, request, headers);
    expect(again.agent).toEqual(first.agent);
    expect(agentStatements()).toHaveLength(3); // the insert that did nothing, the key, the agent
  });

  it("a sandbox call is 5 round trips of its own: 4 timer steps of one, the placement of one", async () => {
    sent.length = 0;
    const { call } = await h.call(h.client.createOutboundCall, {
      accountId: account,
      to: "+15550100000",
      from,
      agent: "counter",
    });
    const callId = call!.id;
    await eventually(
      () => callEvents(h.pool, callId),
      (events) => events.some((e) => e.type === "call.completed"),
    );
    // The relay's and the runner's last statements may still be on their way: wait for quiet.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const own = sent.filter((s) => s.app === "call-control-test" && !shared(s.text));
    const timerSteps = own.filter((s) => s.text.startsWith("BEGIN; SET LOCAL synchronous_commit"));
    const oneRoundTrip = timerSteps.filter((s) => /COMMIT\s*$/.test(s.text));
    const kinds = own.map((s) => s.text.replace(/\s+/g, " ").slice(0, 90));
    expect(timerSteps, kinds.join("\n")).toHaveLength(4);
    expect(oneRoundTrip, kinds.join("\n")).toHaveLength(4);
    expect(own, kinds.join("\n")).toHaveLength(5);
    // The placement (its agent's check, the call, its dial timer, its seat's claim, its event) is
    // one statement: no transaction block around it.
    const placement = own.filter((s) => /INSERT INTO call_control\.calls/.test(s.text));
    expect(placement, kinds.join("\n")).toHaveLength(1);
    expect(placement[0]!.text).toMatch(/^WITH agent AS[\s\S]*INSERT INTO "call_control"\.outbox/);
    expect((await callEvents(h.pool, callId)).map((e) => e.type)).toEqual([
      "call.placed",
      "call.initiated",
      "call.ringing",
      "call.answered",
      "call.completed",
    ]);
  });

  /**
   * Each step's statement (many CTEs) and the timer's deletion are parsed and planned once per
   * connection, as `PREPARE` in the step's own simple query, and from then on sent as
   * `EXECUTE` of the connection's prepared statement (the kit's simpleStatement): before, every
   * step had its parameters written in and was planned anew.
   */
  it("a call's timer steps run from prepared statements, each prepared once per connection", async () => {
    sent.length = 0;
    for (let i = 0; i < 4; i += 1) await placeCompletedCall();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const timerSteps = sent
      .filter((s) => s.app === "call-control-test")
      .map((s) => s.text)
      .filter((text) => text.startsWith("BEGIN; SET LOCAL synchronous_commit"));
    expect(timerSteps).toHaveLength(16);
    const prepares = new Map<string, number>();
    for (const text of timerSteps) {
      expect(text).toMatch(
        /EXECUTE sbs_[0-9a-f]{20}\([\s\S]*;\nEXECUTE sbs_[0-9a-f]{20}\('\d+'\);\nCOMMIT$/,
      );
      for (const [, name] of text.matchAll(/PREPARE (sbs_[0-9a-f]{20}) AS/g)) {
        prepares.set(name!, (prepares.get(name!) ?? 0) + 1);
      }
    }
    // The four steps and the deletion: five statements, each prepared on at most every
    // connection of the pool (8), whatever the number of calls (a connection that prepared
    // one in an earlier test of this file only executes it here).
    const executes = [...timerSteps.join("\n").matchAll(/EXECUTE (sbs_[0-9a-f]{20})/g)].map(
      ([, name]) => name!,
    );
    expect(executes).toHaveLength(32);
    expect(new Set(executes).size).toBe(5);
    for (const [name, count] of prepares) {
      expect(executes).toContain(name);
      expect(count).toBeLessThanOrEqual(8);
    }
  });

  /**
   * Every other statement a call's transactions carry with their BEGIN or COMMIT (the placement,
   * the events appended, the timers set) is prepared too, once the pool has sent it five times
   * and PostgreSQL has taken a PREPARE of it on its own (the kit's simpleStatement): before, they
   * had their values written in and were planned on every send.
   */
  it("once warm, a call's transactions carry no statement with its values written in", async () => {
    for (let i = 0; i < 8; i += 1) await placeCompletedCall();
    sent.length = 0;
    for (let i = 0; i < 3; i += 1) await placeCompletedCall();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const transactions = sent
      .filter((s) => s.app === "call-control-test")
      .map((s) => s.text)
      .filter((text) => /^BEGIN;|;\nCOMMIT$/.test(text));
    expect(transactions.length).toBeGreaterThanOrEqual(3 * 4);
    const written = transactions
      .flatMap((text) => text.split(/;\n|; (?=SET LOCAL)/))
      .filter(
        (statement) =>
          !/^(BEGIN|COMMIT|SET LOCAL [\w ]+|PREPARE sbs_\w+ AS [\s\S]+|EXECUTE sbs_\w+(\([\s\S]*\))?)$/.test(
            statement.trim(),
          ),
      );
    expect(written, written.join("\n---\n")).toEqual([]);
  });
});
