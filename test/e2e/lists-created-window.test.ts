import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool, type Pool } from "@switchboard/kit";
import { startReceiver, type Receiver } from "@switchboard/test-support/fixtures/webhook-receiver";
import { startTestPlatform, type TestPlatform } from "@switchboard/test-support/platform";

type Page = { data: { id: string }[]; next_cursor: string | null; has_more: boolean };
type Problem = { code: string; errors?: { pointer: string }[] };

/** One of the listings that take created_after, created_before and sort. */
interface Listing {
  name: string;
  path: () => string;
  table: string;
  /** Creates one more item through the API; its id. */
  create: () => Promise<string>;
}

/**
 * The calls, messages and webhook-deliveries listings by creation (docs/api.md "Pagination"):
 * ordered by (created_at, id) newest first or, with sort=created_at, oldest first; an exclusive
 * created_after/created_before window; keyset pages that neither skip nor repeat in either
 * direction; the cursor bound to window and order; malformed input refused — through the
 * gateway, on real PostgreSQL.
 */
describe("calls, messages and deliveries listed by creation (PostgreSQL)", () => {
  let p: TestPlatform;
  let db: Pool;
  let token: string;
  let receiver: Receiver;
  let number: string;
  let subscriptionId: string;
  let sent = 0;

  const get = async <T>(path: string, status = 200): Promise<T> => {
    const reply = await p.request(path, { token });
    const body = (await reply.json()) as T;
    expect(reply.status, `${path}: ${JSON.stringify(body)}`).toBe(status);
    return body;
  };
  const post = async (path: string, json: unknown, status: number) => {
    const reply = await p.request(path, { method: "POST", token, json });
    const body = (await reply.json()) as { id: string };
    expect(reply.status, `${path}: ${JSON.stringify(body)}`).toBe(status);
    return body;
  };

  const listings: Listing[] = [
    {
      name: "calls",
      path: () => "/v1/api/calls",
      table: "call_control.calls",
      create: async () =>
        (await post("/v1/api/sandbox/calls/inbound", { from: "+14155550199", to: number }, 201)).id,
    },
    {
      name: "messages",
      path: () => "/v1/api/messages",
      table: "messaging.messages",
      create: async () =>
        (
          await post(
            "/v1/api/sandbox/messages/inbound",
            { from: "+14155550198", to: number, body: `hello ${++sent}` },
            201,
          )
        ).id,
    },
    {
      name: "webhook deliveries",
      path: () => `/v1/api/webhooks/subscriptions/${subscriptionId}/deliveries`,
      table: "webhook.deliveries",
      create: async () =>
        (await post(`/v1/api/webhooks/subscriptions/${subscriptionId}/test`, {}, 202)).id,
    },
  ];

  beforeAll(async () => {
    p = await startTestPlatform({
      database: "postgres",
      seed: 20,
      serviceEnv: { WEBHOOK_ALLOW_PRIVATE_HOSTS: "localhost:*", SANDBOX_RING_DELAY_MS: "20" },
    });
    db = createPool(p.database.url, { max: 2, name: "lists-test" });
    token = await p.token();
    receiver = await startReceiver();
    const search = await get<{ data: { number: string }[] }>(
      "/v1/api/numbers/search?capabilities=voice,sms&limit=1",
    );
    number = search.data[0]!.number;
    const hold = await post("/v1/api/numbers/hold", { number }, 201);
    const assign = await p.request(`/v1/api/numbers/holds/${hold.id}/assign`, {
      method: "POST",
      token,
      json: {},
    });
    expect(assign.status).toBe(200);
    // Subscribed to an event this suite never causes: its deliveries are the test deliveries.
    subscriptionId = (
      await post(
        "/v1/api/webhooks/subscriptions",
        { url: receiver.url, events: ["number.hold_expired"] },
        201,
      )
    ).id;
  }, 120_000);
  afterAll(async () => {
    await receiver?.close();
    await db?.end();
    await p?.stop();
  });

  /** Every page of a listing, following next_cursor. */
  const walk = async (path: string, query: string, between?: () => Promise<void>) => {
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Page = await get<Page>(
        `${path}?${query}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      ids.push(...page.data.map((item) => item.id));
      expect(page.has_more).toBe(page.next_cursor !== null);
      cursor = page.next_cursor;
      if (between) await between();
    } while (cursor);
    return ids;
  };

  for (const listing of listings) {
    it(`${listing.name}: ordered by created_at then id, windowed, paged both ways`, async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(await listing.create());
      // Two items created at the same instant: the id decides between them, in both orders.
      await db.query(
        `UPDATE ${listing.table} SET created_at = (SELECT created_at FROM ${listing.table} WHERE id = $1)
          WHERE id = $2`,
        [ids[2], ids[3]],
      );
      const keys = async (of: string[]) => {
        const { rows } = await db.query<{ id: string; at: string }>(
          `SELECT id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at
             FROM ${listing.table} WHERE id = ANY($1)`,
          [of],
        );
        return rows.sort((a, b) => (a.at === b.at ? (a.id < b.id ? -1 : 1) : a.at < b.at ? -1 : 1));
      };
      const oldestFirst = (await keys(ids)).map((row) => row.id);
      const newestFirst = [...oldestFirst].reverse();
      const path = listing.path();

      expect((await get<Page>(`${path}?limit=200`)).data.map((i) => i.id)).toEqual(newestFirst);
      expect((await get<Page>(`${path}?limit=200&sort=-created_at`)).data.map((i) => i.id)).toEqual(
        newestFirst,
      );
      expect((await get<Page>(`${path}?limit=200&sort=created_at`)).data.map((i) => i.id)).toEqual(
        oldestFirst,
      );

      // Pages of two in either order: every item once, in order.
      expect(await walk(path, "sort=-created_at")).toEqual(newestFirst);
      // Oldest first, an item created while paging sorts after the cursor: it comes last, once.
      let added: string | undefined;
      const ascending = await walk(path, "sort=created_at", async () => {
        added ??= await listing.create();
      });
      expect(ascending).toEqual([...oldestFirst, added]);

      // The window is exclusive at both ends, exact to the microsecond.
      const sorted = await keys(oldestFirst);
      const after = encodeURIComponent(sorted[0]!.at);
      const before = encodeURIComponent(sorted[4]!.at);
      expect(
        (
          await get<Page>(`${path}?created_after=${after}&created_before=${before}&limit=200`)
        ).data.map((i) => i.id),
      ).toEqual(newestFirst.slice(1, 4));
      expect(
        (await get<Page>(`${path}?created_after=${after}&sort=created_at&limit=200`)).data.map(
          (i) => i.id,
        ),
      ).toEqual([...oldestFirst.slice(1), added]);
      // An offset names the same instant: created_before as 2 h east of UTC.
      const newest = sorted[4]!.at;
      const east = new Date(Date.parse(newest) + 2 * 3_600_000).toISOString().slice(0, 19);
      const offset = encodeURIComponent(`${east}.${newest.slice(20, 26)}+02:00`);
      expect(
        (await get<Page>(`${path}?created_before=${offset}&limit=200`)).data.map((i) => i.id),
      ).toEqual(newestFirst.slice(1));

      // A cursor belongs to its order and window.
      const first = await get<Page>(`${path}?sort=created_at&limit=2`);
      const stale = await get<Problem>(
        `${path}?sort=-created_at&limit=2&cursor=${encodeURIComponent(first.next_cursor!)}`,
        400,
      );
      expect(stale.code).toBe("INVALID_CURSOR");
      const moved = await get<Problem>(
        `${path}?sort=created_at&created_after=${after}&limit=2&cursor=${encodeURIComponent(first.next_cursor!)}`,
        400,
      );
      expect(moved.code).toBe("INVALID_CURSOR");
    });

    it(`${listing.name}: a malformed window or sort is 422 validation-failed at its field`, async () => {
      const path = listing.path();
      for (const [query, pointer] of [
        ["created_after=yesterday", "#/query/created_after"],
        ["created_before=2026-11-24", "#/query/created_before"],
        ["created_after=2026-11-24T25:00:00Z", "#/query/created_after"],
        [
          "created_after=2026-11-25T00:00:00Z&created_before=2026-11-25T01:00:00%2B02:00",
          "#/query/created_before",
        ],
        ["sort=created", "#/query/sort"],
      ] as const) {
        const problem = await get<Problem>(`${path}?${query}`, 422);
        expect(problem.code, query).toBe("VALIDATION_FAILED");
        expect(
          problem.errors?.map((e) => e.pointer),
          query,
        ).toEqual([pointer]);
      }
    });
  }
});
