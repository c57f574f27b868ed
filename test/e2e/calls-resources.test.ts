import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startCallPlatform, type CallPlatform } from "@switchboard/test-support/fixtures/calls";

interface Problem {
  code: string;
  errors?: { pointer: string; detail: string }[];
}

/** Seats, agents and routes through the gateway: CRUD, validation, conflicts, isolation. */
describe("seats, agents and routes", () => {
  let p: CallPlatform;
  let token: string;
  beforeAll(async () => {
    p = await startCallPlatform();
    token = await p.token();
  });
  afterAll(async () => p?.stop());

  const send = async (method: string, path: string, json?: unknown, as = token) => {
    const response = await p.request(`/v1${path}`, {
      method,
      token: as,
      ...(json === undefined ? {} : { json }),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: (text ? JSON.parse(text) : undefined) as Record<string, unknown> & Problem,
    };
  };
  const pointers = (body: Problem) => (body.errors ?? []).map((e) => e.pointer).sort();

  it("seats: create with defaults, read, list, update, delete", async () => {
    const created = await send("POST", "/api/seats", { name: "Desk 7" });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: "Desk 7",
      max_concurrent_calls: 1,
      status: "active",
      active_calls: 0,
    });
    expect(created.headers.get("location")).toBe(`/v1/api/seats/${created.body.id}`);
    const id = created.body.id as string;
    // Without SIP_LISTEN no phone can register, but the seat has its SIP account all the same.
    expect(created.body.sip).toEqual({
      username: id,
      domain: "localhost",
      registered: false,
      contact: null,
      password: expect.stringMatching(/^sbsip_[A-Za-z0-9]{24}$/),
    });
    expect(p.callControl().sip).toBeUndefined();
    const read = await send("GET", `/api/seats/${id}`);
    expect(read.body).toMatchObject({ id, name: "Desk 7" });
    expect(read.body.sip).toEqual({
      username: id,
      domain: "localhost",
      registered: false,
      contact: null,
    });
    const updated = await send("PATCH", `/api/seats/${id}`, {
      max_concurrent_calls: 4,
      status: "disabled",
    });
    expect(updated.body).toMatchObject({
      max_concurrent_calls: 4,
      status: "disabled",
      name: "Desk 7",
    });
    const listed = await send("GET", "/api/seats?limit=10");
    expect((listed.body.data as { id: string }[]).map((s) => s.id)).toContain(id);
    expect((await send("DELETE", `/api/seats/${id}`)).status).toBe(204);
    expect((await send("GET", `/api/seats/${id}`)).status).toBe(404);
  });

  it("a disabled seat takes no calls (409 invalid-state)", async () => {
    await send("POST", "/api/agents", { name: "dora" });
    const seat = await send("POST", "/api/seats", { name: "Closed", status: "disabled" });
    const from = await p.assignNumber(token, seat.body.id as string);
    const call = await send("POST", "/api/calls/outbound", {
      to: "+15550100000",
      from,
      agent: "dora",
    });
    expect(call.status).toBe(409);
    expect(call.body.code).toBe("INVALID_STATE");
  });

  it("agents: names are validated and unique per account; renames follow into routes", async () => {
    const bad = await send("POST", "/api/agents", {
      name: "Bad Name",
      description: "x".repeat(1025),
    });
    expect(bad.status).toBe(422);
    expect(pointers(bad.body)).toEqual(["#/description", "#/name"]);
    const first = await send("POST", "/api/agents", { name: "sales.team-1", description: "Sales" });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ name: "sales.team-1", description: "Sales" });
    const dup = await send("POST", "/api/agents", { name: "sales.team-1" });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe("CONFLICT");
    // Another account may use the same name.
    expect(
      (await send("POST", "/api/agents", { name: "sales.team-1" }, await p.otherToken())).status,
    ).toBe(201);

    const number = await p.assignNumber(token);
    const route = await send("POST", "/api/routes", {
      name: "Sales",
      numbers: [number],
      agent: "sales.team-1",
    });
    expect(route.status).toBe(201);
    const renamed = await send("PATCH", `/api/agents/${first.body.id}`, {
      name: "sales",
      description: null,
    });
    expect(renamed.body).toMatchObject({ name: "sales", description: null });
    expect((await send("GET", `/api/routes/${route.body.id}`)).body).toMatchObject({
      agent: "sales",
    });
    const inUse = await send("DELETE", `/api/agents/${first.body.id}`);
    expect(inUse.status).toBe(409);
    expect(inUse.body.code).toBe("CONFLICT");
  });

  it("routes: numbers must be the account's and belong to one route; patch and delete", async () => {
    await send("POST", "/api/agents", { name: "support" });
    const seat = await send("POST", "/api/seats", {
      name: "Support desk",
      max_concurrent_calls: 2,
    });
    const [a, b, c] = [
      await p.assignNumber(token),
      await p.assignNumber(token),
      await p.assignNumber(token),
    ];
    const created = await send("POST", "/api/routes", {
      name: "Support",
      numbers: [a, b],
      agent: "support",
      seat_id: seat.body.id,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: "Support",
      numbers: [a, b],
      agent: "support",
      seat_id: seat.body.id,
    });
    expect(created.headers.get("location")).toBe(`/v1/api/routes/${created.body.id}`);

    const taken = await send("POST", "/api/routes", {
      name: "Steal",
      numbers: [c, b],
      agent: "support",
    });
    expect(taken.status).toBe(409);
    expect(taken.body).toMatchObject({ code: "CONFLICT", number: b, route_id: created.body.id });

    const invalid = await send("POST", "/api/routes", {
      name: " ",
      numbers: [c, "+15550100000", "0800"],
      agent: "nobody!",
      seat_id: "seat_x",
      extra: true,
    });
    expect(invalid.status).toBe(422);
    expect(pointers(invalid.body)).toEqual([
      "#/agent",
      "#/extra",
      "#/name",
      "#/numbers/2",
      "#/seat_id",
    ]);
    const unknown = await send("POST", "/api/routes", {
      name: "Ghost",
      numbers: [c, "+15550100000"],
      agent: "ghost",
      seat_id: "seat_01jd0000000000000000000000",
    });
    expect(unknown.status).toBe(422);
    expect(pointers(unknown.body)).toEqual(["#/agent", "#/numbers/1", "#/seat_id"]);
    const twice = await send("POST", "/api/routes", {
      name: "Twice",
      numbers: [c, c],
      agent: "support",
    });
    expect(pointers(twice.body)).toEqual(["#/numbers/1"]);

    const patched = await send("PATCH", `/api/routes/${created.body.id}`, {
      numbers: [c, a],
      seat_id: null,
      name: "Support 2",
    });
    expect(patched.body).toMatchObject({
      name: "Support 2",
      numbers: [c, a],
      seat_id: null,
      agent: "support",
    });
    // b is free again.
    expect(
      (await send("POST", "/api/routes", { name: "B line", numbers: [b], agent: "support" }))
        .status,
    ).toBe(201);
    // Seat in use by no route now: deletable.
    expect((await send("DELETE", `/api/seats/${seat.body.id}`)).status).toBe(204);
    expect((await send("DELETE", `/api/routes/${created.body.id}`)).status).toBe(204);
    expect((await send("GET", `/api/routes/${created.body.id}`)).status).toBe(404);
  });

  it("a seat used by a route or by a live call cannot be deleted", async () => {
    await send("POST", "/api/agents", { name: "ops" });
    const seat = await send("POST", "/api/seats", { name: "Ops", max_concurrent_calls: 2 });
    const number = await p.assignNumber(token, seat.body.id as string);
    const route = await send("POST", "/api/routes", {
      name: "Ops line",
      numbers: [],
      agent: "ops",
      seat_id: seat.body.id,
    });
    expect((await send("DELETE", `/api/seats/${seat.body.id}`)).status).toBe(409);
    await send("DELETE", `/api/routes/${route.body.id}`);
    const call = await send("POST", "/api/calls/outbound", {
      to: "+14155550111",
      from: number,
      agent: "ops",
    });
    expect(call.body.seat_id).toBe(seat.body.id);
    const live = await send("DELETE", `/api/seats/${seat.body.id}`);
    expect(live.status).toBe(409);
    expect(live.body.code).toBe("CONFLICT");
    await send("POST", `/api/calls/${call.body.id}/hangup`);
    expect((await send("DELETE", `/api/seats/${seat.body.id}`)).status).toBe(204);
  });

  it("validation failures are 422 with pointers; another account's resources are 404", async () => {
    const seat = await send("POST", "/api/seats", {
      name: "",
      max_concurrent_calls: 0,
      status: "open",
    });
    expect(seat.status).toBe(422);
    expect(pointers(seat.body)).toEqual(["#/max_concurrent_calls", "#/name", "#/status"]);
    const patch = await send("PATCH", "/api/seats/seat_01jd0000000000000000000000", {
      max_concurrent_calls: 10001,
    });
    expect(pointers(patch.body)).toEqual(["#/max_concurrent_calls"]);
    const limit = await send("GET", "/api/agents?limit=500");
    expect(pointers(limit.body)).toEqual(["#/query/limit"]);

    const mine = await send("POST", "/api/seats", { name: "Mine" });
    const other = await p.otherToken();
    for (const [method, path] of [
      ["GET", `/api/seats/${mine.body.id}`],
      ["PATCH", `/api/seats/${mine.body.id}`],
      ["DELETE", `/api/seats/${mine.body.id}`],
    ]) {
      expect(
        (await send(method!, path!, method === "PATCH" ? { name: "Theirs" } : undefined, other))
          .status,
      ).toBe(404);
    }
    const theirs = await send("GET", "/api/seats", undefined, other);
    expect((theirs.body.data as { id: string }[]).map((s) => s.id)).not.toContain(mine.body.id);
    expect((await send("GET", "/api/seats/not-an-id")).status).toBe(404);
  });

  it("lists page newest first with Link rel=next", async () => {
    for (let i = 0; i < 3; i++) await send("POST", "/api/agents", { name: `pager-${i}` });
    const first = await send("GET", "/api/agents?limit=2");
    expect(first.body.has_more).toBe(true);
    expect(first.headers.get("link")).toContain('rel="next"');
    const names = (first.body.data as { name: string }[]).map((a) => a.name);
    expect(names).toEqual(["pager-2", "pager-1"]);
    const second = await send("GET", `/api/agents?limit=2&cursor=${first.body.next_cursor}`);
    expect((second.body.data as { name: string }[])[0]!.name).toBe("pager-0");
    expect((await send("GET", "/api/agents?cursor=garbage")).status).toBe(400);
  });
});
