import { createLocalJWKSet, flattenedVerify, type JWK } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newId, publishEvent, type EventEnvelope } from "@switchboard/kit";
import { testDatabaseKinds } from "@switchboard/kit/testing";
import { usage, wire } from "@switchboard/proto";
import { canonicalPayload } from "../src/record-signer.js";
import type { UnsignedRecord } from "../src/ledger-record.js";
import { failure, requestRecord, startUsageHarness, type UsageHarness } from "./harness.js";

const postgres = testDatabaseKinds[0];

/** The REST item of a gRPC record (what the gateway serves). */
const item = (r: usage.UsageRecord) => ({
  id: r.id,
  kind: wire.usageKind.spell(r.kind)!,
  occurred_at: r.occurredAt,
  account_id: r.accountId,
  principal: r.principal ?? null,
  request_id: r.requestId ?? null,
  resource_id: r.resourceId ?? null,
  method: r.method ?? null,
  route: r.route ?? null,
  status: r.status ?? null,
  replayed: r.replayed ?? null,
  quantity: r.quantity,
  unit: wire.usageUnit.spell(r.unit)!,
  attributes: r.attributes ?? {},
  kid: r.kid,
  signature: r.signature,
});

async function verifyAll(h: UsageHarness, records: usage.UsageRecord[]): Promise<void> {
  const { keys } = await h.call(h.client.listSigningKeys, {});
  const jwks = createLocalJWKSet({
    keys: keys.map((k): JWK => ({
      kty: k.kty,
      crv: k.crv,
      x: k.x,
      kid: k.kid,
      alg: k.alg,
      use: k.use,
    })),
  });
  for (const record of records) {
    const { signature, ...unsigned } = item(record);
    const [protectedHeader, , sig] = signature.split(".");
    await flattenedVerify(
      {
        protected: protectedHeader!,
        payload: Buffer.from(canonicalPayload(unsigned as UnsignedRecord)).toString("base64url"),
        signature: sig!,
      },
      jwks,
      { algorithms: ["EdDSA"] },
    );
  }
}

const factEvent = (
  type: string,
  data: Record<string, unknown>,
  accountId = "acct_test",
): EventEnvelope => ({
  id: newId("evt"),
  type,
  timestamp: new Date().toISOString(),
  account_id: accountId,
  resource_id: newId("call"),
  sequence: 1,
  data,
});

describe.each(testDatabaseKinds)("usage ledger on $name", (kind) => {
  let h: UsageHarness;
  beforeAll(async () => {
    h = await startUsageHarness(kind);
  });
  afterAll(() => h?.stop());

  it("stores each gateway record once, however often it is delivered", async () => {
    const records = [
      requestRecord(),
      requestRecord({ status: 404 }),
      requestRecord({ replayed: true }),
    ];
    await h.publishRequests(records, `${records[0]!.requestId}-a`);
    // A redelivery (another job carrying the same records) and an overlapping batch.
    await h.publishRequests(records, `${records[0]!.requestId}-b`);
    const extra = requestRecord();
    await h.publishRequests([records[1]!, extra]);
    const ids = [...records, extra].map((r) => r.requestId);
    await h.waitForCount("request_id = ANY($1)", [ids], 4);
    await h.running.consumers.batcher.drained();
    expect(await h.count("request_id = ANY($1)", [ids])).toBe(4);
    const { records: listed } = await h.call(h.client.listUsageEvents, {
      accountId: "acct_test",
      kind: usage.UsageKind.API_REQUEST,
      limit: 10,
      cursor: "",
    });
    expect(listed.map((r) => r.requestId).sort()).toEqual([...ids].sort());
    const replayed = listed.find((r) => r.requestId === records[2]!.requestId);
    expect(item(replayed!)).toMatchObject({
      replayed: true,
      quantity: 1,
      unit: "request",
      method: "GET",
    });
    await verifyAll(h, listed);
  });

  it("is append-only in the database: UPDATE, DELETE and TRUNCATE fail", async () => {
    const record = requestRecord();
    await h.publishRequests([record]);
    await h.waitForCount("request_id = $1", [record.requestId], 1);
    await expect(
      h.pool.query("UPDATE usage.records SET account_id = 'acct_x' WHERE request_id = $1", [
        record.requestId,
      ]),
    ).rejects.toThrow(/append-only/);
    await expect(
      h.pool.query("DELETE FROM usage.records WHERE request_id = $1", [record.requestId]),
    ).rejects.toThrow(/append-only/);
    await expect(h.pool.query("TRUNCATE usage.records")).rejects.toThrow(/append-only/);
    expect(await h.count("request_id = $1", [record.requestId])).toBe(1);
  });

  it("records business facts once per event, with their quantities", async () => {
    const completed = factEvent("call.completed", {
      duration_seconds: 61,
      call_id: "c",
      body: "secret",
    });
    const sent = factEvent("message.sent", { segments: 2 });
    for (const event of [completed, sent]) {
      await publishEvent(h.bus, { name: "usage" }, event);
      // A redelivery that the queue's job-id dedupe does not catch.
      await h.bus.publish(
        "events.usage",
        { name: event.type, data: event },
        { jobId: `${event.id}-again` },
      );
    }
    await h.waitForCount("event_id = ANY($1)", [[completed.id, sent.id]], 2);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await h.count("event_id = ANY($1)", [[completed.id, sent.id]])).toBe(2);
    const { records } = await h.call(h.client.listUsageEvents, {
      accountId: "acct_test",
      resourceId: completed.resource_id,
      limit: 0,
      cursor: "",
    });
    expect(records).toHaveLength(1);
    expect(item(records[0]!)).toMatchObject({
      kind: "call.completed",
      quantity: 61,
      unit: "second",
      resource_id: completed.resource_id,
      attributes: { call_id: "c" },
    });
    await verifyAll(h, records);
  });

  it("hides another account's records", async () => {
    const theirs = requestRecord({ accountId: "acct_other" });
    await h.publishRequests([theirs]);
    await h.waitForCount("request_id = $1", [theirs.requestId], 1);
    const { records } = await h.call(h.client.listUsageEvents, {
      accountId: "acct_test",
      limit: 200,
      cursor: "",
    });
    expect(records.some((r) => r.requestId === theirs.requestId)).toBe(false);
    const { records: own } = await h.call(h.client.listUsageEvents, {
      accountId: "acct_other",
      limit: 0,
      cursor: "",
    });
    const id = own.find((r) => r.requestId === theirs.requestId)!.id;
    expect(
      (await failure(h.call(h.client.getUsageEvent, { accountId: "acct_test", id }))).kind,
    ).toBe("not-found");
    const { record } = await h.call(h.client.getUsageEvent, { accountId: "acct_other", id });
    expect(record?.requestId).toBe(theirs.requestId);
    expect(
      (await failure(h.call(h.client.getUsageEvent, { accountId: "acct_other", id: "use_nope" })))
        .kind,
    ).toBe("not-found");
  });
});

describe("usage ledger on postgres with BullMQ", () => {
  let h: UsageHarness;
  beforeAll(async () => {
    h = await startUsageHarness(postgres, { bus: "bullmq" });
  });
  afterAll(() => h?.stop());

  it("keeps pagination consistent while records are inserted", async () => {
    const account = `acct_${newId("req").slice(4, 14)}`;
    const base = Date.parse("2026-11-20T00:00:00Z");
    const at = (minute: number) => new Date(base + minute * 60_000).toISOString();
    // Initial records, several sharing one instant (ties are ordered by id).
    const initial = Array.from({ length: 60 }, (_, i) =>
      requestRecord({ accountId: account, occurredAt: at(Math.floor(i / 3) * 2) }),
    );
    for (let i = 0; i < initial.length; i += 10) await h.publishRequests(initial.slice(i, i + 10));
    await h.waitForCount("account_id = $1", [account], initial.length);
    const before = (
      await h.pool.query<{ request_id: string }>(
        "SELECT request_id FROM usage.records WHERE account_id = $1",
        [account],
      )
    ).rows.map((r) => r.request_id);

    // Walk 7 at a time while a writer keeps adding records concurrently — newer, older and at
    // instants already served — and more land between each pair of page fetches. The writer is
    // paced: older records land behind the cursor, so an unpaced one can outrun the walk.
    let writing = true;
    const written: string[] = [];
    const writer = (async () => {
      for (let i = 0; writing; i += 1) {
        const record = requestRecord({ accountId: account, occurredAt: at(((i * 7) % 130) - 5) });
        written.push(record.requestId);
        await h.publishRequests([record]);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    const seen: string[] = [];
    let cursor = "";
    let page = 0;
    const inserted: string[] = [];
    do {
      const response = await h.call(h.client.listUsageEvents, {
        accountId: account,
        limit: 7,
        cursor,
      });
      seen.push(...response.records.map((r) => r.requestId!));
      const keys = response.records.map((r) => `${r.occurredAt} ${r.id}`);
      expect(keys).toEqual([...keys].sort().reverse());
      cursor = response.nextCursor;
      expect(response.hasMore).toBe(cursor !== "");
      const more = [-1, 200, page * 4, 0].map((m) =>
        requestRecord({ accountId: account, occurredAt: at(m) }),
      );
      inserted.push(...more.map((r) => r.requestId));
      await Promise.all([h.publishRequests(more.slice(0, 2)), h.publishRequests(more.slice(2))]);
      await h.waitForCount("request_id = ANY($1)", [inserted], inserted.length);
      page += 1;
    } while (cursor !== "");
    writing = false;
    await writer;
    expect(written.length).toBeGreaterThan(0);

    expect(new Set(seen).size).toBe(seen.length);
    for (const requestId of before) expect(seen).toContain(requestId);
    // A cursor is bound to its filters.
    const first = await h.call(h.client.listUsageEvents, {
      accountId: account,
      limit: 5,
      cursor: "",
    });
    const other = failure(
      h.call(h.client.listUsageEvents, {
        accountId: account,
        kind: usage.UsageKind.API_REQUEST,
        limit: 5,
        cursor: first.nextCursor,
      }),
    );
    expect((await other).kind).toBe("invalid-cursor");
  });

  it("loses and duplicates nothing when its database connections die mid-ingest", async () => {
    const records = Array.from({ length: 400 }, () => requestRecord({ accountId: "acct_crash" }));
    const publishing = (async () => {
      for (let i = 0; i < records.length; i += 4) {
        await h.publishRequests(records.slice(i, i + 4));
        if (i % 40 === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    for (let i = 0; i < 5; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 30));
      await h.pool
        .query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'usage-test' AND pid <> pg_backend_pid() AND state <> 'idle'",
        )
        .catch(() => undefined);
    }
    await publishing;
    await h.waitForCount("account_id = 'acct_crash'", [], records.length, 30_000);
    const { rows } = await h.pool.query<{ n: number; distinct_n: number }>(
      "SELECT count(*)::int AS n, count(DISTINCT request_id)::int AS distinct_n FROM usage.records WHERE account_id = 'acct_crash'",
    );
    expect(rows[0]).toEqual({ n: records.length, distinct_n: records.length });
  });

  it("refuses a hand-off while stopped and stores the resent batches once after a restart", async () => {
    const early = Array.from({ length: 20 }, () => requestRecord({ accountId: "acct_restart" }));
    await h.publishRequests(early);
    await h.stopService();
    const during = Array.from({ length: 50 }, () => requestRecord({ accountId: "acct_restart" }));
    // The gateway's relay keeps them in its outbox and resends (gateway tests cover that side).
    await expect(h.publishRequests(during.slice(0, 5))).rejects.toThrow();
    await h.restartService();
    for (let i = 0; i < during.length; i += 5) await h.publishRequests(during.slice(i, i + 5));
    await h.publishRequests(early, `${early[0]!.requestId}-redelivered`);
    await h.waitForCount("account_id = 'acct_restart'", [], 70);
    await h.running.consumers.batcher.drained();
    expect(await h.count("account_id = 'acct_restart'")).toBe(70);
  });

  it("keeps records signed before a rotation verifiable", async () => {
    const before = requestRecord({ accountId: "acct_rotate" });
    await h.publishRequests([before]);
    await h.waitForCount("request_id = $1", [before.requestId], 1);
    const { key } = await h.call(h.client.rotateSigningKey, {});
    const after = requestRecord({ accountId: "acct_rotate" });
    await h.publishRequests([after]);
    await h.waitForCount("request_id = $1", [after.requestId], 1);
    const { records } = await h.call(h.client.listUsageEvents, {
      accountId: "acct_rotate",
      limit: 0,
      cursor: "",
    });
    expect(records).toHaveLength(2);
    expect(records.find((r) => r.requestId === after.requestId)?.kid).toBe(key?.kid);
    expect(records.find((r) => r.requestId === before.requestId)?.kid).not.toBe(key?.kid);
    const { keys } = await h.call(h.client.listSigningKeys, {});
    expect(keys[0]).toMatchObject({
      kid: key?.kid,
      status: usage.KeyStatus.ACTIVE,
      kty: "OKP",
      crv: "Ed25519",
      use: "sig",
    });
    expect(keys.some((k) => k.status === usage.KeyStatus.RETIRED)).toBe(true);
    await verifyAll(h, records);
  });
});
