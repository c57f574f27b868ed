import { createRealTestDatabase } from "@switchboard/kit/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { digestHa1 } from "../src/sip/stack/digest.js";
import { startServiceHarness, type ServiceHarness } from "./harness.js";

const account = "acct_keys";
const keyed = (key: string) => ({ "idempotency-key": key });

/**
 * A create or a hangup the gateway retries under its Idempotency-Key after losing the answer
 * (its deadline passed while the database was paused, a replica was killed after the commit):
 * call-control itself must answer what the first attempt did, not do it twice or meet the state
 * it left (the faults suite saw a keyed retry answered 409 "already has an agent named …").
 */
describe("creates and hangups retried under their Idempotency-Key (real PostgreSQL)", () => {
  let h: ServiceHarness;
  beforeAll(async () => {
    // Sandbox calls stay ringing: only the hangups here end them.
    h = await startServiceHarness(
      { name: "postgres", create: createRealTestDatabase },
      { SANDBOX_RING_DELAY_MS: "60000" },
    );
  });
  afterAll(async () => h?.stop());

  const count = async (table: string, name: string) =>
    Number(
      (
        await h.pool.query<{ n: string }>(
          `SELECT count(*) AS n FROM call_control.${table} WHERE account_id = $1 AND name = $2`,
          [account, name],
        )
      ).rows[0]!.n,
    );

  it("an agent: the retry gets the agent the first attempt made", async () => {
    const request = { accountId: account, name: "retried", description: "front desk" };
    const first = await h.call(h.client.createAgent, request, keyed("agent-1"));
    const again = await h.call(h.client.createAgent, request, keyed("agent-1"));
    expect(again.agent).toEqual(first.agent);
    // Without a key the name is taken: 409, as before.
    await expect(h.call(h.client.createAgent, request)).rejects.toMatchObject({
      kind: "conflict",
    });
  });

  it("the same key with another request is idempotency-mismatch, and changes nothing", async () => {
    await h.call(h.client.createAgent, { accountId: account, name: "one" }, keyed("agent-2"));
    await expect(
      h.call(h.client.createAgent, { accountId: account, name: "two" }, keyed("agent-2")),
    ).rejects.toMatchObject({ kind: "idempotency-mismatch" });
    expect(await count("agents", "two")).toBe(0);
  });

  it("a seat: one seat however many retries race, each answer with a working password", async () => {
    const request = { accountId: account, name: "raced seat", maxConcurrentCalls: 2 };
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => h.call(h.client.createSeat, request, keyed("seat-1"))),
    );
    expect(new Set(answers.map((a) => a.seat!.id)).size).toBe(1);
    expect(await count("seats", "raced seat")).toBe(1);
    // Each retry issued a new password; the digest stored is the one of the last answer, so
    // exactly one answer's password works (the earlier ones were never delivered).
    const { rows } = await h.pool.query<{ realm: string; ha1_md5: string }>(
      "SELECT realm, ha1_md5 FROM call_control.seat_sip_credentials WHERE seat_id = $1",
      [answers[0]!.seat!.id],
    );
    const stored = rows[0]!;
    const working = answers.filter(
      (a) => digestHa1("MD5", a.seat!.id, stored.realm, a.sipPassword) === stored.ha1_md5,
    );
    expect(working).toHaveLength(1);
  });

  it("a route: the retry gets the route, its numbers once", async () => {
    await h.call(h.client.createAgent, { accountId: account, name: "routed" });
    const number = await h.assignNumber(account);
    const request = { accountId: account, name: "keyed route", numbers: [number], agent: "routed" };
    const first = await h.call(h.client.createRoute, request, keyed("route-1"));
    const again = await h.call(h.client.createRoute, request, keyed("route-1"));
    expect(again.route).toEqual(first.route);
    expect(await count("routes", "keyed route")).toBe(1);
  });

  it("an inbound answer: the retry gets the call it answered, not 409 invalid-state", async () => {
    const number = await h.assignNumber(account);
    await h.call(h.client.createRoute, {
      accountId: account,
      name: "answered route",
      numbers: [number],
      agent: "routed",
    });
    const { call } = await h.call(h.client.deliverSandboxInboundCall, {
      accountId: account,
      from: "+14155550177",
      to: number,
    });
    const answer = { accountId: account, callId: call!.id };
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        h.call(h.client.answerInboundCall, answer, keyed("answer-1")),
      ),
    );
    for (const a of answers) expect(a).toEqual(answers[0]);
    expect(answers[0]!.call!.answeredAt).toBeTruthy();
    await expect(h.call(h.client.answerInboundCall, answer)).rejects.toMatchObject({
      kind: "invalid-state",
    });
  });

  it("a key older than 24 hours is free again", async () => {
    await h.call(h.client.createAgent, { accountId: account, name: "old" }, keyed("agent-3"));
    await h.pool.query(
      `UPDATE call_control.agents SET created_at = now() - interval '25 hours'
        WHERE account_id = $1 AND idempotency_key = 'agent-3'`,
      [account],
    );
    const fresh = await h.call(
      h.client.createAgent,
      { accountId: account, name: "new" },
      keyed("agent-3"),
    );
    expect(fresh.agent!.name).toBe("new");
  });

  it("a hangup: the retry gets the call the first hangup ended, not 409 invalid-state", async () => {
    const seat = await h.call(h.client.createSeat, { accountId: account, name: "hangup seat" });
    const from = await h.assignNumber(account, seat.seat!.id);
    const { call } = await h.call(h.client.createOutboundCall, {
      accountId: account,
      to: "+14155550123",
      from,
      agent: "retried",
    });
    const hangup = { accountId: account, callId: call!.id };
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => h.call(h.client.hangupCall, hangup, keyed("hangup-1"))),
    );
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    expect(answers[0]!.call!.endedAt).toBeTruthy();
    // Without the key the ended call is 409 invalid-state, as the contract says.
    await expect(h.call(h.client.hangupCall, hangup)).rejects.toMatchObject({
      kind: "invalid-state",
    });
  });
});
