import { testDatabaseKinds } from "@switchboard/kit/testing";
import { inventory } from "@switchboard/proto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateNumbers } from "../src/generator.js";
import { sweepExpiredHolds } from "../src/sweeper.js";
import { failure, outcome, startHarness, type Harness } from "./harness.js";

const { HoldStatus, NumberStatus } = inventory;
const seed = 23;
const count = 2_000;
const numbers = [...generateNumbers({ count, seed })].map((n) => n.e164);
let next = 0;
/** A number no other test has touched. */
const fresh = (): string => numbers[(next += 7) % numbers.length]!;
const seatId = "seat_01jd0000000000000000000000";

describe.each(testDatabaseKinds)("holds and assignment on $name", (kind) => {
  let h: Harness;
  const holdLimit = 5;

  const createHold = (
    accountId: string,
    number: string,
    extra: Partial<inventory.CreateHoldRequest> = {},
    key?: string,
  ) =>
    h
      .call(
        h.client.createHold,
        inventory.CreateHoldRequest.fromPartial({ accountId, number, ...extra }),
        key ? { "idempotency-key": key } : undefined,
      )
      .then((r) => r.hold!);
  const getHold = (accountId: string, holdId: string) =>
    h.call(h.client.getHold, { accountId, holdId }).then((r) => r.hold!);
  const releaseHold = (accountId: string, holdId: string) =>
    h.call(h.client.releaseHold, { accountId, holdId }).then((r) => r.hold!);
  const assignHold = (accountId: string, holdId: string, seat?: string) =>
    h.call(h.client.assignHold, { accountId, holdId, seatId: seat });
  const searchFor = (number: string) =>
    h
      .call(
        h.client.searchNumbers,
        inventory.SearchNumbersRequest.fromPartial({ accountId: "a", prefix: number }),
      )
      .then((r) => r.numbers.map((n) => n.number));
  const events = (numberId: string) =>
    h.pool
      .query<{
        id: string;
        type: string;
        account_id: string;
        sequence: number;
        data: Record<string, unknown>;
        published_at: Date | null;
      }>("SELECT * FROM inventory.outbox WHERE resource_id = $1 ORDER BY sequence", [numberId])
      .then((r) => r.rows);
  const expire = async (holdId: string) => {
    await h.pool.query(
      "UPDATE inventory.holds SET expires_at = now() - interval '1 second' WHERE id = $1",
      [holdId],
    );
    await h.pool.query(
      "UPDATE inventory.numbers SET held_until = now() - interval '1 second' WHERE hold_id = $1",
      [holdId],
    );
  };

  beforeAll(async () => {
    h = await startHarness(kind, { seed, count, holdLimit });
  });
  afterAll(() => h?.stop());

  it("holds an available number: active, with RFC 3339 times and the default TTL", async () => {
    const number = fresh();
    const before = Date.now();
    const hold = await createHold("acct_a", number);
    expect(hold.id).toMatch(/^hld_[0-9a-z]{26}$/);
    expect(hold).toMatchObject({ number, status: HoldStatus.ACTIVE });
    expect(hold.numberId).toMatch(/^num_/);
    expect(hold.expiresAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const ttl = (Date.parse(hold.expiresAt) - Date.parse(hold.createdAt)) / 1000;
    expect(ttl).toBe(600);
    expect(Date.parse(hold.createdAt)).toBeGreaterThan(before - 5_000);
    expect(await getHold("acct_a", hold.id)).toEqual(hold);
    expect(await searchFor(number)).toEqual([]);
    const custom = await createHold("acct_a", fresh(), { ttlSeconds: 60 });
    expect((Date.parse(custom.expiresAt) - Date.parse(custom.createdAt)) / 1000).toBe(60);
    await releaseHold("acct_a", hold.id);
    await releaseHold("acct_a", custom.id);
  });

  it("writes number.held to the outbox with the hold", async () => {
    const hold = await createHold("acct_o", fresh());
    const rows = await events(hold.numberId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      type: "number.held",
      account_id: "acct_o",
      sequence: 1,
      published_at: null,
      data: {
        hold_id: hold.id,
        number: hold.number,
        number_id: hold.numberId,
        expires_at: hold.expiresAt,
      },
    });
    expect(rows[0]!.id).toMatch(/^evt_/);
    await releaseHold("acct_o", hold.id);
    expect((await events(hold.numberId)).map((e) => [e.type, e.sequence])).toEqual([
      ["number.held", 1],
      ["number.released", 2],
    ]);
  });

  it("gives exactly one of 200 concurrent holds on one number", async () => {
    const number = fresh();
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => outcome(createHold(`acct_race_${i}`, number))),
    );
    expect(results.filter((r) => r === "ok")).toHaveLength(1);
    expect(results.filter((r) => r === "number-unavailable")).toHaveLength(199);
    const { rows } = await h.pool.query(
      "SELECT count(*)::int AS n FROM inventory.holds WHERE e164 = $1",
      [number],
    );
    expect(rows[0].n).toBe(1);
  });

  it("answers number-unavailable, not-found and validation-failed", async () => {
    const number = fresh();
    const hold = await createHold("acct_b", number);
    expect((await failure(createHold("acct_c", number))).kind).toBe("number-unavailable");
    expect((await failure(createHold("acct_b", number))).kind).toBe("number-unavailable");
    expect((await failure(createHold("acct_b", "+15550000000"))).kind).toBe("not-found");
    const invalid = await failure(createHold("acct_b", "12345", { ttlSeconds: 59 }));
    expect(invalid.kind).toBe("validation-failed");
    expect(invalid.meta.errors?.map((e) => e.pointer)).toEqual(["#/number", "#/ttl_seconds"]);
    expect((await failure(createHold("acct_b", fresh(), { ttlSeconds: 1801 }))).kind).toBe(
      "validation-failed",
    );
    expect((await failure(createHold("", fresh()))).kind).toBe("validation-failed");
    await releaseHold("acct_b", hold.id);
  });

  it("hides another account's hold as not-found", async () => {
    const hold = await createHold("acct_d", fresh());
    expect((await failure(getHold("acct_e", hold.id))).kind).toBe("not-found");
    expect((await failure(releaseHold("acct_e", hold.id))).kind).toBe("not-found");
    expect((await failure(assignHold("acct_e", hold.id))).kind).toBe("not-found");
    expect((await failure(getHold("acct_d", "hld_nope"))).kind).toBe("not-found");
    expect((await getHold("acct_d", hold.id)).status).toBe(HoldStatus.ACTIVE);
    await releaseHold("acct_d", hold.id);
  });

  it("releases a hold: the number is available again; a second release is invalid-state", async () => {
    const hold = await createHold("acct_f", fresh());
    const released = await releaseHold("acct_f", hold.id);
    expect(released.status).toBe(HoldStatus.RELEASED);
    expect(released.releasedAt).toMatch(/Z$/);
    expect(await searchFor(hold.number)).toEqual([hold.number]);
    expect((await failure(releaseHold("acct_f", hold.id))).kind).toBe("invalid-state");
    expect((await failure(assignHold("acct_f", hold.id))).kind).toBe("invalid-state");
    expect((await getHold("acct_f", hold.id)).status).toBe(HoldStatus.RELEASED);
  });

  it("expires lazily, and the sweeper records number.hold_expired", async () => {
    const hold = await createHold("acct_g", fresh());
    await expire(hold.id);
    expect((await getHold("acct_g", hold.id)).status).toBe(HoldStatus.EXPIRED);
    expect(await searchFor(hold.number)).toEqual([hold.number]);
    expect((await failure(releaseHold("acct_g", hold.id))).kind).toBe("invalid-state");
    expect((await failure(assignHold("acct_g", hold.id))).kind).toBe("invalid-state");
    // the number can be held again before any sweep
    const again = await createHold("acct_h", hold.number);
    expect(again.status).toBe(HoldStatus.ACTIVE);

    const other = await createHold("acct_g", fresh());
    await expire(other.id);
    expect(await sweepExpiredHolds(h.pool)).toBeGreaterThanOrEqual(2);
    const stored = await h.pool.query(
      "SELECT status, expired_at FROM inventory.holds WHERE id = ANY($1)",
      [[hold.id, other.id]],
    );
    expect(stored.rows.map((r) => r.status)).toEqual(["expired", "expired"]);
    const numberRow = await h.pool.query(
      "SELECT hold_id, held_until FROM inventory.numbers WHERE id = $1",
      [other.numberId],
    );
    expect(numberRow.rows[0]).toEqual({ hold_id: null, held_until: null });
    expect((await events(other.numberId)).map((e) => e.type)).toEqual([
      "number.held",
      "number.hold_expired",
    ]);
    // the re-held number keeps its new hold; the old hold's expiry is still recorded
    expect((await events(hold.numberId)).map((e) => [e.type, e.sequence])).toEqual([
      ["number.held", 1],
      ["number.held", 2],
      ["number.hold_expired", 3],
    ]);
    expect((await getHold("acct_h", again.id)).status).toBe(HoldStatus.ACTIVE);
    expect(await searchFor(hold.number)).toEqual([]);
    expect(await sweepExpiredHolds(h.pool)).toBe(0);
    await releaseHold("acct_h", again.id);
  });

  it("assigns a held number to the account and seat, then releases it back", async () => {
    const hold = await createHold("acct_i", fresh());
    const { hold: converted, number } = await assignHold("acct_i", hold.id, seatId);
    expect(converted).toMatchObject({ id: hold.id, status: HoldStatus.CONVERTED });
    expect(converted!.convertedAt).toMatch(/Z$/);
    expect(number).toMatchObject({
      id: hold.numberId,
      number: hold.number,
      status: NumberStatus.ASSIGNED,
      seatId,
    });
    expect(number!.assignedAt).toMatch(/Z$/);
    expect((await failure(assignHold("acct_i", hold.id))).kind).toBe("invalid-state");
    expect((await failure(releaseHold("acct_i", hold.id))).kind).toBe("invalid-state");
    expect((await failure(createHold("acct_j", hold.number))).kind).toBe("number-unavailable");
    expect(await searchFor(hold.number)).toEqual([]);

    const byId = await h.call(h.client.getNumber, {
      accountId: "acct_i",
      numberIdOrE164: hold.numberId,
    });
    const byE164 = await h.call(h.client.getNumber, {
      accountId: "acct_i",
      numberIdOrE164: hold.number,
    });
    expect(byId.number).toEqual(number);
    expect(byE164.number).toEqual(number);
    expect(
      (
        await failure(
          h.call(h.client.getNumber, { accountId: "acct_j", numberIdOrE164: hold.numberId }),
        )
      ).kind,
    ).toBe("not-found");
    expect(
      (
        await failure(
          h.call(h.client.releaseNumber, { accountId: "acct_j", numberId: hold.numberId }),
        )
      ).kind,
    ).toBe("not-found");

    const released = await h.call(h.client.releaseNumber, {
      accountId: "acct_i",
      numberId: hold.numberId,
    });
    expect(released.number).toMatchObject({ id: hold.numberId, status: NumberStatus.AVAILABLE });
    expect(released.number!.seatId).toBeUndefined();
    expect(await searchFor(hold.number)).toEqual([hold.number]);
    expect(
      (
        await failure(
          h.call(h.client.getNumber, { accountId: "acct_i", numberIdOrE164: hold.numberId }),
        )
      ).kind,
    ).toBe("not-found");
    expect((await events(hold.numberId)).map((e) => [e.type, e.sequence, e.account_id])).toEqual([
      ["number.held", 1, "acct_i"],
      ["number.assigned", 2, "acct_i"],
      ["number.released", 3, "acct_i"],
    ]);
    expect(
      (
        await failure(
          h.call(h.client.releaseNumber, { accountId: "acct_i", numberId: hold.numberId }),
        )
      ).kind,
    ).toBe("not-found");
  });

  it("rejects a malformed seat id", async () => {
    const hold = await createHold("acct_k", fresh());
    const error = await failure(assignHold("acct_k", hold.id, "desk-1"));
    expect(error.kind).toBe("validation-failed");
    expect(error.meta.errors?.[0]?.pointer).toBe("#/seat_id");
    await releaseHold("acct_k", hold.id);
  });

  it("lists the account's numbers newest assignment first, with a bound cursor", async () => {
    const assigned: string[] = [];
    for (let i = 0; i < 5; i++) {
      const hold = await createHold("acct_l", fresh());
      await assignHold("acct_l", hold.id);
      assigned.unshift(hold.numberId);
    }
    const list = (accountId: string, limit: number, cursor = "") =>
      h.call(h.client.listNumbers, { accountId, limit, cursor });
    const seen: string[] = [];
    let cursor = "";
    for (;;) {
      const page = await list("acct_l", 2, cursor);
      seen.push(...page.numbers.map((n) => n.id));
      for (const n of page.numbers) expect(n.status).toBe(NumberStatus.ASSIGNED);
      if (!page.hasMore) break;
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(assigned);
    const first = await list("acct_l", 2);
    expect((await failure(list("acct_m", 2, first.nextCursor))).kind).toBe("invalid-cursor");
    expect((await list("acct_m", 0)).numbers).toEqual([]);
    expect((await failure(list("acct_l", 201))).kind).toBe("validation-failed");
  });

  it("caps active holds per account, race-safely, and counts only active ones", async () => {
    const results = await Promise.all(
      Array.from({ length: 12 }, () => outcome(createHold("acct_cap", fresh()))),
    );
    expect(results.filter((r) => r === "ok")).toHaveLength(holdLimit);
    expect(results.filter((r) => r === "hold-limit-reached")).toHaveLength(12 - holdLimit);
    const error = await failure(createHold("acct_cap", fresh()));
    expect(error.kind).toBe("hold-limit-reached");
    const { rows } = await h.pool.query(
      "SELECT id FROM inventory.holds WHERE account_id = 'acct_cap' ORDER BY id LIMIT 2",
    );
    await releaseHold("acct_cap", rows[0].id);
    await expire(rows[1].id);
    expect(await outcome(createHold("acct_cap", fresh()))).toBe("ok");
    expect(await outcome(createHold("acct_cap", fresh()))).toBe("ok");
    expect(await outcome(createHold("acct_cap", fresh()))).toBe("hold-limit-reached");
  });

  it("replays CreateHold by Idempotency-Key, also under concurrency", async () => {
    const number = fresh();
    const first = await createHold("acct_n", number, {}, "key-1");
    const replay = await createHold("acct_n", number, {}, "key-1");
    expect(replay).toEqual(first);
    // the key is per account: another account with the same key is a new request
    expect((await failure(createHold("acct_p", number, {}, "key-1"))).kind).toBe(
      "number-unavailable",
    );
    expect((await failure(createHold("acct_n", fresh(), {}, "key-1"))).kind).toBe(
      "idempotency-mismatch",
    );

    const racing = fresh();
    const holds = await Promise.all(
      Array.from({ length: 10 }, () => createHold("acct_q", racing, {}, "key-2")),
    );
    expect(new Set(holds.map((x) => x.id)).size).toBe(1);
    const { rows } = await h.pool.query(
      "SELECT count(*)::int AS n FROM inventory.holds WHERE account_id = 'acct_q'",
    );
    expect(rows[0].n).toBe(1);
    expect((await events(first.numberId)).filter((e) => e.type === "number.held")).toHaveLength(1);
  });

  it("answers a keyed assign, hold release and number release once: a retry gets the first answer", async () => {
    // The gateway retries under the key when it lost the answer (a deadline, a killed replica):
    // the retry must not meet the state the first attempt left (409 invalid-state, 404).
    const keyed = (key: string) => ({ "idempotency-key": key });
    const hold = await createHold("acct_r", fresh());
    const assign = { accountId: "acct_r", holdId: hold.id, seatId };
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => h.call(h.client.assignHold, assign, keyed("assign-1"))),
    );
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    expect(answers[0]!.hold!.status).toBe(HoldStatus.CONVERTED);
    const assigned = (await events(hold.numberId)).filter((e) => e.type === "number.assigned");
    expect(assigned).toHaveLength(1);
    // The key with another request: mismatch, nothing changes.
    const other = await createHold("acct_r", fresh());
    expect(
      (
        await failure(
          h.call(h.client.assignHold, { ...assign, holdId: other.id }, keyed("assign-1")),
        )
      ).kind,
    ).toBe("idempotency-mismatch");
    expect((await getHold("acct_r", other.id)).status).toBe(HoldStatus.ACTIVE);
    // Without a key, the state decides, as before.
    expect((await failure(assignHold("acct_r", hold.id))).kind).toBe("invalid-state");

    const released = { accountId: "acct_r", holdId: other.id };
    const firstRelease = await h.call(h.client.releaseHold, released, keyed("release-1"));
    const againRelease = await h.call(h.client.releaseHold, released, keyed("release-1"));
    expect(againRelease).toEqual(firstRelease);

    const number = { accountId: "acct_r", numberId: hold.numberId };
    const firstFree = await h.call(h.client.releaseNumber, number, keyed("free-1"));
    const againFree = await h.call(h.client.releaseNumber, number, keyed("free-1"));
    expect(againFree).toEqual(firstFree);
    expect((await failure(h.call(h.client.releaseNumber, number))).kind).toBe("not-found");
  });
});
