import { randomBytes } from "node:crypto";
import { createLocalJWKSet, type JSONWebKeySet } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { callUnary, newId } from "@switchboard/kit";
import { ensureBootstrap } from "@switchboard/gateway/admin";
import { recordKinds } from "@switchboard/usage";
import { usageKinds } from "@switchboard/gateway/schemas/usage";
import {
  requestIdOf,
  startUsagePlatform,
  type UsagePlatform,
} from "@switchboard/test-support/fixtures/usage-platform";
import { verifySignedRecord as verifyRecord } from "@switchboard/kit";

type Item = Record<string, unknown> & { id: string; kid: string; request_id: string | null };
type Page = { data: Item[]; next_cursor: string | null; has_more: boolean };

describe("the usage ledger through the gateway (PostgreSQL + Redis)", () => {
  let p: UsagePlatform;
  let token: string;

  beforeAll(async () => {
    p = await startUsagePlatform();
    token = await p.token();
  });
  afterAll(() => p?.stop());

  const jwks = async () =>
    createLocalJWKSet((await (await p.request("/.well-known/jwks.json")).json()) as JSONWebKeySet);

  /** Searches an available number (the record of that search is not checked). */
  const availableNumber = async (offset: number): Promise<string> => {
    const page = (await (await p.request("/api/numbers/search?limit=20", { token })).json()) as {
      data: { number: string }[];
    };
    return page.data[offset]!.number;
  };

  it("serves records that verify against the served JWKS, and no changed field verifies", async () => {
    const warm = await p.request("/api/numbers/search?limit=1", { token });
    await p.waitForRequests([requestIdOf(warm)]);
    const page = (await (await p.request("/api/usage/events?limit=25", { token })).json()) as Page;
    expect(page.data.length).toBeGreaterThan(0);
    const keys = await jwks();
    for (const record of page.data) expect(await verifyRecord(record, keys), record.id).toBe(true);

    const record = page.data.find((r) => r.resource_id !== null) ?? page.data[0]!;
    const changed: Record<string, unknown> = {
      id: newId("use"),
      kind: "smoke.run",
      occurred_at: "2020-01-01T00:00:00.000Z",
      account_id: "acct_someone_else",
      principal: "cli_other",
      request_id: newId("req"),
      resource_id: newId("hld"),
      method: "PATCH",
      route: "/api/other",
      status: 599,
      replayed: !(record.replayed as boolean),
      quantity: 1000,
      unit: "second",
      attributes: { latency_ms: 0 },
      kid: newId("key"),
    };
    expect(Object.keys(changed).sort()).toEqual(
      Object.keys(record)
        .filter((k) => k !== "signature")
        .sort(),
    );
    for (const [field, value] of Object.entries(changed)) {
      expect(await verifyRecord({ ...record, [field]: value }, keys), field).toBe(false);
    }
    const { signature } = record;
    expect(await verifyRecord({ ...record, signature: `${signature as string}x` }, keys)).toBe(
      false,
    );
  });

  it("keeps records signed before a key rotation verifiable", async () => {
    const before = await p.request("/api/numbers/search?limit=1", { token });
    await p.waitForRequests([requestIdOf(before)]);
    const client = p.usageClient();
    try {
      const { key } = await callUnary(
        "usage",
        client,
        client.rotateSigningKey,
        {},
        { deadlineMs: 10_000 },
      );
      const after = await p.request("/api/numbers/search?limit=1", { token });
      const ids = [requestIdOf(before), requestIdOf(after)];
      await p.waitForRequests(ids);
      const page = (await (
        await p.request("/api/usage/events?kind=api.request&limit=200", { token })
      ).json()) as Page;
      const [old, fresh] = ids.map((id) => page.data.find((r) => r.request_id === id)!);
      expect(fresh!.kid).toBe(key!.kid);
      expect(old!.kid).not.toBe(key!.kid);
      const served = (await (await p.request("/.well-known/jwks.json")).json()) as JSONWebKeySet;
      const kids = served.keys.map((k) => k.kid);
      expect(kids).toContain(old!.kid);
      expect(kids).toContain(fresh!.kid);
      const keys = createLocalJWKSet(served);
      expect(await verifyRecord(old!, keys)).toBe(true);
      expect(await verifyRecord(fresh!, keys)).toBe(true);
    } finally {
      client.close();
    }
  });

  it("records the business facts of a real hold and assignment from inventory's outbox", async () => {
    const number = await availableNumber(3);
    const hold = (await (
      await p.request("/api/numbers/hold", { method: "POST", token, json: { number } })
    ).json()) as {
      id: string;
      number_id: string;
    };
    await p.request(`/api/numbers/holds/${hold.id}/assign`, { method: "POST", token, json: {} });
    const deadline = Date.now() + 15_000;
    let facts: Item[] = [];
    while (Date.now() < deadline && facts.length < 2) {
      const page = (await (
        await p.request(`/api/usage/events?resource_id=${hold.number_id}`, { token })
      ).json()) as Page;
      facts = page.data.filter((r) => r.kind !== "api.request");
      if (facts.length < 2) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(facts.map((r) => r.kind)).toEqual(["number.assigned", "number.held"]);
    expect(facts[1]).toMatchObject({
      account_id: p.accountId,
      resource_id: hold.number_id,
      quantity: 1,
      unit: "hold",
      method: null,
      route: null,
      status: null,
      replayed: null,
      attributes: { hold_id: hold.id, number },
    });
    const keys = await jwks();
    for (const fact of facts) expect(await verifyRecord(fact, keys)).toBe(true);
  });

  it("lists with filters and keyset pages, and refuses bad filters and foreign cursors", async () => {
    const responses = [];
    for (let i = 0; i < 5; i += 1)
      responses.push(await p.request(`/api/numbers/search?limit=1&country=US`, { token }));
    const ids = responses.map(requestIdOf);
    await p.waitForRequests(ids);
    const since = new Date(Date.now() - 60_000).toISOString();

    // Walk every page of api.request records since a minute ago, two at a time, via Link.
    const walked: Item[] = [];
    let next: string | null =
      `/api/usage/events?kind=api.request&since=${encodeURIComponent(since)}&limit=2`;
    while (next) {
      const response = await p.request(next, { token });
      const page = (await response.json()) as Page;
      walked.push(...page.data);
      const link = response.headers.get("link");
      expect(Boolean(link)).toBe(page.has_more);
      next = link ? /<([^>]+)>/.exec(link)![1]! : null;
    }
    expect(new Set(walked.map((r) => r.id)).size).toBe(walked.length);
    for (const id of ids) expect(walked.some((r) => r.request_id === id)).toBe(true);
    expect(
      walked.every((r) => r.kind === "api.request" && (r.occurred_at as string) >= since),
    ).toBe(true);
    const times = walked.map((r) => r.occurred_at as string);
    expect(times).toEqual([...times].sort().reverse());

    // until is exclusive; an empty window is an empty page.
    const empty = (await (
      await p.request(`/api/usage/events?until=2000-01-01T00:00:00Z`, { token })
    ).json()) as Page;
    expect(empty).toEqual({ data: [], next_cursor: null, has_more: false });

    const first = (await (
      await p.request("/api/usage/events?kind=api.request&limit=1", { token })
    ).json()) as Page;
    const foreign = await p.request(
      `/api/usage/events?kind=number.held&limit=1&cursor=${first.next_cursor}`,
      { token },
    );
    expect(foreign.status).toBe(400);
    expect(await foreign.json()).toMatchObject({ code: "INVALID_CURSOR" });
    expect((await p.request("/api/usage/events?cursor=bogus", { token })).status).toBe(400);

    const invalid = await p.request("/api/usage/events?kind=call.*&since=monday&limit=0", {
      token,
    });
    expect(invalid.status).toBe(422);
    const problem = (await invalid.json()) as { errors: { pointer: string }[] };
    expect(problem.errors.map((e) => e.pointer).sort()).toEqual([
      "#/query/kind",
      "#/query/limit",
      "#/query/since",
    ]);
    const backwards = await p.request(
      "/api/usage/events?since=2026-11-21T00:00:00Z&until=2026-11-20T00:00:00Z",
      { token },
    );
    expect(backwards.status).toBe(422);
  });

  it("shows an account only its own records", async () => {
    const secret = `sbcs_${randomBytes(24).toString("base64url")}`;
    await ensureBootstrap(p.platform.gateway.pool, {
      accountId: "acct_other",
      clientId: "cli_other",
      clientSecret: secret,
    });
    const other = await p.token(undefined, { clientId: "cli_other", clientSecret: secret });
    const mine = (await (await p.request("/api/usage/events?limit=1", { token })).json()) as Page;
    const record = mine.data[0]!;
    const foreign = await p.request(`/api/usage/events/${record.id}`, { token: other });
    expect(foreign.status).toBe(404);
    const theirs = (await (
      await p.request("/api/usage/events?limit=200", { token: other })
    ).json()) as Page;
    expect(theirs.data.every((r) => r.account_id === "acct_other")).toBe(true);
    expect((await p.request(`/api/usage/events/use_nope`, { token })).status).toBe(404);
  });

  it("documents the same kinds the ledger records", () => {
    expect([...usageKinds]).toEqual([...recordKinds]);
  });
});
