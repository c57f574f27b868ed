import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  eventually,
  startCallPlatform,
  type CallPlatform,
} from "@switchboard/test-support/fixtures/calls";

interface Call {
  id: string;
  direction: string;
  status: string;
  route_id: string | null;
  agent: string | null;
  seat_id: string | null;
  stir_shaken: unknown;
  hangup_cause: string | null;
  hangup_source: string | null;
  sip_code: number | null;
  answered_at: string | null;
  ended_at: string | null;
  code?: string;
  errors?: { pointer: string }[];
}

/** Inbound calls through the gateway: delivery under a route, answering, races, rejection. */
describe("inbound calls", () => {
  let p: CallPlatform;
  let token: string;
  let routed: string;
  let unrouted: string;
  let routeId: string;
  let seatId: string;

  beforeAll(async () => {
    p = await startCallPlatform({
      env: { SANDBOX_CALL_SECONDS: "0.6", SANDBOX_RING_DELAY_MS: "50" },
    });
    token = await p.token();
    for (const name of ["front-desk", "night-desk"]) {
      await p.request("/v1/api/agents", { method: "POST", token, json: { name } });
    }
    seatId = (
      (await (
        await p.request("/v1/api/seats", {
          method: "POST",
          token,
          json: { name: "reception", max_concurrent_calls: 1 },
        })
      ).json()) as { id: string }
    ).id;
    routed = await p.assignNumber(token);
    unrouted = await p.assignNumber(token);
    const route = await p.request("/v1/api/routes", {
      method: "POST",
      token,
      json: { name: "main line", numbers: [routed], agent: "front-desk", seat_id: seatId },
    });
    routeId = ((await route.json()) as { id: string }).id;
  });
  afterAll(async () => p?.stop());

  const deliver = async (to: string, from = "+442071838750") => {
    const response = await p.request("/v1/api/sandbox/calls/inbound", {
      method: "POST",
      token,
      json: { from, to },
    });
    return { status: response.status, body: (await response.json()) as Call };
  };
  const answer = async (json: Record<string, unknown>) => {
    const response = await p.request("/v1/api/calls/inbound/answer", {
      method: "POST",
      token,
      json,
    });
    return { status: response.status, body: (await response.json()) as Call };
  };
  const get = async (id: string) =>
    (await (await p.request(`/v1/api/calls/${id}`, { token })).json()) as Call;

  it("rings under the number's route, and is rejected with no_route without one", async () => {
    const ringing = await deliver(routed);
    expect(ringing.status).toBe(201);
    expect(ringing.body).toMatchObject({
      direction: "inbound",
      status: "ringing",
      route_id: routeId,
      agent: "front-desk",
      stir_shaken: null,
    });
    const rejected = await deliver(unrouted);
    expect(rejected.status).toBe(201);
    expect(rejected.body).toMatchObject({
      status: "rejected",
      hangup_cause: "no_route",
      hangup_source: "platform",
      sip_code: 404,
      route_id: null,
    });
    const notMine = await deliver("+15550100000");
    expect(notMine.status).toBe(422);
    expect(notMine.body.errors?.[0]?.pointer).toBe("#/to");
    // A withheld caller is "anonymous"; anything else that is not E.164 is refused.
    const anonymous = await deliver(unrouted, "anonymous");
    expect(anonymous.status).toBe(201);
    expect(anonymous.body).toMatchObject({ from: "anonymous", early_media: false });
    const restricted = await deliver(unrouted, "restricted");
    expect(restricted.status).toBe(422);
    expect(restricted.body.errors?.[0]?.pointer).toBe("#/from");
    // The ringing call is declined so the seat stays free for the next test.
    const declined = await p.request(`/v1/api/calls/${ringing.body.id}/hangup`, {
      method: "POST",
      token,
    });
    expect(await declined.json()).toMatchObject({
      status: "rejected",
      hangup_cause: "call_rejected",
      hangup_source: "callee",
      sip_code: 603,
    });
  });

  it("two concurrent answers: one 200, one 409; the caller hangs up after SANDBOX_CALL_SECONDS", async () => {
    const { body: call } = await deliver(routed);
    const [a, b] = await Promise.all([
      answer({ call_id: call.id }),
      answer({ call_id: call.id, route_id: routeId, agent: "night-desk" }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const won = a.status === 200 ? a : b;
    const lost = a.status === 200 ? b : a;
    expect(lost.body.code).toBe("INVALID_STATE");
    expect(won.body).toMatchObject({ status: "in_progress", route_id: routeId, seat_id: seatId });
    expect(["front-desk", "night-desk"]).toContain(won.body.agent);
    expect(won.body.answered_at).not.toBeNull();
    const seat = (await (await p.request(`/v1/api/seats/${seatId}`, { token })).json()) as {
      active_calls: number;
    };
    expect(seat.active_calls).toBe(1);

    // The seat is full (max 1): a second inbound call rings but cannot be answered on it.
    const { body: second } = await deliver(routed);
    const busy = await answer({ call_id: second.id });
    expect(busy.status).toBe(409);
    expect(busy.body.code).toBe("SEAT_BUSY");

    const done = await eventually(
      () => get(call.id),
      (c) => c.ended_at !== null,
    );
    expect(done).toMatchObject({
      status: "completed",
      hangup_cause: "normal_clearing",
      hangup_source: "caller",
    });
    expect(Date.parse(done.ended_at!) - Date.parse(done.answered_at!)).toBeGreaterThanOrEqual(590);
    const answeredLate = await answer({ call_id: second.id });
    expect(answeredLate.status).toBe(200);
    const hung = await p.request(`/v1/api/calls/${second.id}/hangup`, { method: "POST", token });
    expect(await hung.json()).toMatchObject({
      status: "completed",
      hangup_cause: "normal_clearing",
      hangup_source: "callee",
    });
  });

  it("answer races on a seatless route: of each pair of concurrent answers exactly one wins", async () => {
    const number = await p.assignNumber(token);
    await p.request("/v1/api/routes", {
      method: "POST",
      token,
      json: { name: "race line", numbers: [number], agent: "night-desk" },
    });
    const calls = await Promise.all(Array.from({ length: 6 }, () => deliver(number)));
    const results = await Promise.all(
      calls.map(({ body }) =>
        Promise.all([answer({ call_id: body.id }), answer({ call_id: body.id })]),
      ),
    );
    for (const pair of results) expect(pair.map((r) => r.status).sort()).toEqual([200, 409]);
    await Promise.all(
      calls.map(({ body }) =>
        p.request(`/v1/api/calls/${body.id}/hangup`, { method: "POST", token }),
      ),
    );
  });

  it("refuses answers that do not fit: another route, an ended or outbound call, an unknown agent", async () => {
    const { body: call } = await deliver(routed);
    const other = await p.request("/v1/api/routes", {
      method: "POST",
      token,
      json: { name: "other line", numbers: [], agent: "night-desk" },
    });
    const otherRoute = ((await other.json()) as { id: string }).id;
    expect((await answer({ call_id: call.id, route_id: otherRoute })).status).toBe(409);
    const unknownAgent = await answer({ call_id: call.id, agent: "ghost" });
    expect(unknownAgent.status).toBe(422);
    expect(unknownAgent.body.errors?.[0]?.pointer).toBe("#/agent");
    const malformed = await answer({ call_id: "call_1", agent: "Ghost" });
    expect(malformed.status).toBe(422);
    expect(malformed.body.errors?.map((e) => e.pointer).sort()).toEqual(["#/agent", "#/call_id"]);
    expect((await answer({ call_id: "call_01jd0000000000000000000000" })).status).toBe(404);
    expect((await answer({ call_id: call.id })).status).toBe(200);
    await p.request(`/v1/api/calls/${call.id}/hangup`, { method: "POST", token });
    const ended = await answer({ call_id: call.id });
    expect(ended.status).toBe(409);
    expect(ended.body.code).toBe("INVALID_STATE");

    const from = await p.assignNumber(token);
    const outbound = await p.request("/v1/api/calls/outbound", {
      method: "POST",
      token,
      json: { to: "+15550100002", from, agent: "front-desk" },
    });
    const outboundId = ((await outbound.json()) as Call).id;
    await eventually(
      () => get(outboundId),
      (c) => c.status === "ringing",
    );
    expect((await answer({ call_id: outboundId })).status).toBe(409);
    expect((await answer({ call_id: call.id, colour: "red" })).status).toBe(422);
    const other2 = await p.otherToken();
    const foreign = await p.request("/v1/api/calls/inbound/answer", {
      method: "POST",
      token: other2,
      json: { call_id: outboundId },
    });
    expect(foreign.status).toBe(404);
  });

  it("an unanswered inbound call stops ringing at the ring timeout (no_answer, timeout)", async () => {
    const { body: call } = await deliver(routed);
    await p.db.query(
      "UPDATE call_control.scheduled_actions SET due_at = now() WHERE call_id = $1 AND kind = 'call.timeout'",
      [call.id],
    );
    const done = await eventually(
      () => get(call.id),
      (c) => c.ended_at !== null,
    );
    expect(done).toMatchObject({
      status: "no_answer",
      hangup_cause: "timeout",
      hangup_source: "platform",
      sip_code: 480,
    });
    const events = await p.db.query<{ type: string }>(
      "SELECT type FROM call_control.outbox WHERE resource_id = $1 ORDER BY sequence",
      [call.id],
    );
    expect(events.rows.map((e) => e.type)).toEqual(["call.incoming", "call.completed"]);
  });
});
