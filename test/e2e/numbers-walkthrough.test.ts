import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "@switchboard/test-support/platform";

/** The README walkthrough through the real gateway and inventory, on both databases. */
describe.each(["postgres", "pglite"] as const)("numbers walkthrough on %s", (database) => {
  let platform: TestPlatform;
  beforeAll(async () => {
    platform = await startTestPlatform({ database, seed: 3_000 });
  });
  afterAll(async () => platform?.stop());

  it("token → search → hold → assign → list → release", async () => {
    const token = await platform.token();
    const search = await platform.request("/v1/api/numbers/search?country=US&limit=5", { token });
    expect(search.status).toBe(200);
    expect(search.headers.get("api-version")).toBe("v1");
    const page = (await search.json()) as {
      data: { number: string; status: string }[];
      has_more: boolean;
    };
    expect(page.data).toHaveLength(5);
    expect(page.data.every((n) => n.status === "available")).toBe(true);
    const number = page.data[0]!.number;

    const held = await platform.request("/v1/api/numbers/hold", {
      method: "POST",
      token,
      json: { number },
    });
    expect(held.status).toBe(201);
    const hold = (await held.json()) as { id: string; status: string; number: string };
    expect(hold).toMatchObject({ status: "active", number });
    expect(held.headers.get("location")).toBe(`/v1/api/numbers/holds/${hold.id}`);

    const again = await platform.request("/v1/api/numbers/hold", {
      method: "POST",
      token,
      json: { number },
    });
    expect(again.status).toBe(409);
    expect(((await again.json()) as { code: string }).code).toBe("NUMBER_UNAVAILABLE");

    const assigned = await platform.request(`/v1/api/numbers/holds/${hold.id}/assign`, {
      method: "POST",
      token,
    });
    expect(assigned.status).toBe(200);
    const converted = (await assigned.json()) as {
      status: string;
      phone_number: { id: string; status: string };
    };
    expect(converted.status).toBe("converted");
    expect(converted.phone_number.status).toBe("assigned");

    const owned = await platform.request("/v1/api/numbers", { token });
    const ownedPage = (await owned.json()) as { data: { number: string }[] };
    expect(ownedPage.data.map((n) => n.number)).toContain(number);

    const searchAgain = await platform.request(
      `/api/numbers/search?prefix=${encodeURIComponent(number)}`,
      { token },
    );
    expect(((await searchAgain.json()) as { data: unknown[] }).data).toHaveLength(0);

    const released = await platform.request(
      `/v1/api/numbers/${converted.phone_number.id}/release`,
      {
        method: "POST",
        token,
      },
    );
    expect(released.status).toBe(200);
    expect(((await released.json()) as { status: string }).status).toBe("available");
  });

  it("200 concurrent holds on one number through the gateway: exactly one 201", async () => {
    const token = await platform.token("numbers:read numbers:write");
    const search = await platform.request("/v1/api/numbers/search?country=CA&limit=1", { token });
    const number = ((await search.json()) as { data: { number: string }[] }).data[0]!.number;
    const responses = await Promise.all(
      Array.from({ length: 200 }, () =>
        platform.request("/v1/api/numbers/hold", { method: "POST", token, json: { number } }),
      ),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(199);
    const { rows } = await platform.inventoryPool.query(
      "SELECT count(*)::int AS n FROM inventory.holds h JOIN inventory.numbers n ON n.id = h.number_id WHERE n.e164 = $1",
      [number],
    );
    expect(rows[0].n).toBe(1);
  });

  it("pages a listing with Link rel=next and never repeats an item", async () => {
    const token = await platform.token("numbers:read");
    const seen = new Set<string>();
    let path: string | null = "/v1/api/numbers/search?country=GB&limit=50";
    let pages = 0;
    while (path && pages < 4) {
      const response: Response = await platform.request(path, { token });
      expect(response.status).toBe(200);
      const body = (await response.json()) as {
        data: { id: string }[];
        next_cursor: string | null;
        has_more: boolean;
      };
      for (const item of body.data) {
        expect(seen.has(item.id)).toBe(false);
        seen.add(item.id);
      }
      const link = response.headers.get("link");
      if (body.has_more) {
        expect(link).toMatch(/^<\/v1\/api\/numbers\/search\?.*cursor=.*>; rel="next"$/);
        path = link!.slice(1, link!.indexOf(">"));
      } else {
        expect(body.next_cursor).toBeNull();
        path = null;
      }
      pages += 1;
    }
    expect(seen.size).toBeGreaterThan(50);
  });
});
