import { X509Certificate } from "node:crypto";
import { compactVerify, decodeProtectedHeader } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  eventually,
  PUBLIC_URL,
  startCallPlatform,
  type CallPlatform,
} from "@switchboard/test-support/fixtures/calls";

interface Call {
  id: string;
  status: string;
  direction: string;
  to: string;
  from: string;
  agent: string | null;
  seat_id: string | null;
  stir_shaken: { attestation: string; identity: string } | null;
  hangup_cause: string | null;
  hangup_source: string | null;
  sip_code: number | null;
  answered_at: string | null;
  ended_at: string | null;
  duration_seconds: number | null;
}

/** Outbound calls through the gateway on real PostgreSQL: outcomes, signing, hangup, isolation. */
describe("outbound calls", () => {
  let p: CallPlatform;
  let token: string;
  let seatId: string;
  let seatNumber: string;
  let plainNumber: string;

  beforeAll(async () => {
    p = await startCallPlatform({
      env: { SANDBOX_CALL_SECONDS: "1.5", SANDBOX_RING_DELAY_MS: "50" },
    });
    token = await p.token();
    await p.request("/v1/api/agents", { method: "POST", token, json: { name: "alice" } });
    const seat = await p.request("/v1/api/seats", {
      method: "POST",
      token,
      json: { name: "desk 1", max_concurrent_calls: 20 },
    });
    seatId = ((await seat.json()) as { id: string }).id;
    seatNumber = await p.assignNumber(token, seatId);
    plainNumber = await p.assignNumber(token);
  });
  afterAll(async () => p?.stop());

  const place = async (json: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const response = await p.request("/v1/api/calls/outbound", {
      method: "POST",
      token,
      headers,
      json: { from: plainNumber, agent: "alice", ...json },
    });
    return {
      status: response.status,
      body: (await response.json()) as Call & { code?: string; errors?: { pointer: string }[] },
    };
  };
  const get = async (id: string) =>
    (await (await p.request(`/v1/api/calls/${id}`, { token })).json()) as Call;
  const ended = (id: string) =>
    eventually(
      () => get(id),
      (c) => c.ended_at !== null,
    );
  const events = async (id: string) =>
    (
      await p.db.query<{ type: string; sequence: number; data: Record<string, unknown> }>(
        "SELECT type, sequence, data FROM call_control.outbox WHERE resource_id = $1 ORDER BY sequence",
        [id],
      )
    ).rows;

  it("every sandbox outcome ends in its state with the right cause", async () => {
    const cases = [
      {
        to: "+15550100000",
        status: "completed",
        cause: "normal_clearing",
        source: "callee",
        sip: 200,
        answered: true,
      },
      {
        to: "+15550101231",
        status: "busy",
        cause: "user_busy",
        source: "callee",
        sip: 486,
        answered: false,
      },
      {
        to: "+15550100002",
        status: "no_answer",
        cause: "no_answer",
        source: "callee",
        sip: 480,
        answered: false,
      },
      {
        to: "+15550100003",
        status: "failed",
        cause: "network_error",
        source: "callee",
        sip: 503,
        answered: false,
      },
      {
        to: "+15550109994",
        status: "rejected",
        cause: "call_rejected",
        source: "callee",
        sip: 603,
        answered: false,
      },
    ];
    const placed = await Promise.all(cases.map((c) => place({ to: c.to })));
    for (const { status, body } of placed) {
      expect(status).toBe(201);
      expect(body).toMatchObject({ direction: "outbound", status: "queued", agent: "alice" });
    }
    const results = await Promise.all(placed.map(({ body }) => ended(body.id)));
    results.forEach((call, i) => {
      const want = cases[i]!;
      expect(call, want.to).toMatchObject({
        status: want.status,
        hangup_cause: want.cause,
        hangup_source: want.source,
        sip_code: want.sip,
      });
      expect(call.answered_at !== null).toBe(want.answered);
      if (want.answered) {
        expect(call.duration_seconds).toBeGreaterThanOrEqual(1);
        expect(Date.parse(call.ended_at!) - Date.parse(call.answered_at!)).toBeGreaterThanOrEqual(
          1_490,
        );
      } else {
        expect(call.duration_seconds).toBe(0);
      }
    });
    // Every transition emitted its event, in order, with a gapless per-call sequence.
    const answered = await events(results[0]!.id);
    expect(answered.map((e) => e.type)).toEqual([
      "call.placed",
      "call.initiated",
      "call.ringing",
      "call.answered",
      "call.completed",
    ]);
    expect(answered.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5]);
    expect(answered.at(-1)!.data).toMatchObject({
      call_id: results[0]!.id,
      status: "completed",
      duration_seconds: results[0]!.duration_seconds,
    });
    expect((await events(results[1]!.id)).map((e) => e.type)).toEqual([
      "call.placed",
      "call.initiated",
      "call.completed",
    ]);

    // The usage ledger records the facts: one call placed, and the billable seconds.
    const usage = async (kind: string) =>
      (await (
        await p.request(`/v1/api/usage/events?kind=${kind}&resource_id=${results[0]!.id}`, {
          token,
        })
      ).json()) as {
        data: { quantity: number; unit: string }[];
      };
    const completed = await eventually(
      () => usage("call.completed"),
      (page) => page.data.length === 1,
    );
    expect(completed.data[0]).toMatchObject({ quantity: results[0]!.duration_seconds });
    expect((await usage("call.placed")).data).toHaveLength(1);
  });

  it("a ring timeout ends the call as no_answer with cause timeout; a time limit ends it with time_limit", async () => {
    const ringing = await place({ to: "+15550100002", timeout_seconds: 5 });
    const talking = await place({ to: "+14155550170", time_limit_seconds: 1 });
    await eventually(
      () => get(ringing.body.id),
      (c) => c.status === "ringing",
    );
    // Fast-forward the durable ring timer (the sandbox far end would give up after 1.5 s).
    await p.db.query(
      "UPDATE call_control.scheduled_actions SET due_at = now() WHERE call_id = $1 AND kind = 'call.timeout'",
      [ringing.body.id],
    );
    expect(await ended(ringing.body.id)).toMatchObject({
      status: "no_answer",
      hangup_cause: "timeout",
      hangup_source: "platform",
      sip_code: 487,
    });
    const limited = await ended(talking.body.id);
    expect(limited).toMatchObject({
      status: "completed",
      hangup_cause: "time_limit",
      hangup_source: "platform",
    });
    expect(Date.parse(limited.ended_at!) - Date.parse(limited.answered_at!)).toBeGreaterThanOrEqual(
      990,
    );
    expect(limited.duration_seconds).toBeGreaterThanOrEqual(1);
  });

  it("hangup cancels before answer, completes after, and an ended call never changes", async () => {
    const early = await place({ to: "+14155550171" });
    const canceled = await p.request(`/v1/api/calls/${early.body.id}/hangup`, {
      method: "POST",
      token,
    });
    expect(canceled.status).toBe(200);
    expect(await canceled.json()).toMatchObject({
      status: "canceled",
      hangup_cause: "originator_cancel",
      hangup_source: "caller",
      sip_code: 487,
    });
    const live = await place({ to: "+14155550172" });
    await eventually(
      () => get(live.body.id),
      (c) => c.status === "in_progress",
    );
    const hung = await p.request(`/v1/api/calls/${live.body.id}/hangup`, { method: "POST", token });
    expect(await hung.json()).toMatchObject({
      status: "completed",
      hangup_cause: "normal_clearing",
      hangup_source: "caller",
    });
    const again = await p.request(`/v1/api/calls/${live.body.id}/hangup`, {
      method: "POST",
      token,
    });
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ code: "INVALID_STATE" });
    // The sandbox network's script for the canceled call was dropped: nothing moves it later.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await get(early.body.id)).toMatchObject({ status: "canceled", answered_at: null });
  });

  it("signs every call: the PASSporT verifies with the published certificate and carries the right claims", async () => {
    const cert = await fetch(`${p.url}/.well-known/stir-shaken/cert.pem`);
    expect(cert.status).toBe(200);
    expect(cert.headers.get("content-type")).toContain("application/pem-certificate-chain");
    const pem = await cert.text();
    const x509 = new X509Certificate(pem);
    // The TNAuthList extension (RFC 8226) names the service provider code.
    await import("@switchboard/call-control/stir-shaken/reflect-metadata");
    const peculiar = await import("@peculiar/x509");
    const tnAuthList = new peculiar.X509Certificate(pem).getExtension("1.3.6.1.5.5.7.1.26");
    expect(Buffer.from(tnAuthList!.value).toString("hex")).toBe(
      Buffer.from("3008a0061604", "hex").toString("hex") + Buffer.from("SWBD").toString("hex"),
    );
    expect(x509.subject).toContain("Switchboard STIR/SHAKEN");
    expect(x509.verify(x509.publicKey)).toBe(true);
    const key = x509.publicKey;

    const onSeat = await place({ to: "+15550100000", from: seatNumber });
    const noSeat = await place({ to: "+15550100000", from: plainNumber });
    const otherSeat = await place({ to: "+15550100000", from: plainNumber, seat_id: seatId });
    const cases = [
      { call: onSeat.body, attest: "A", from: seatNumber },
      { call: noSeat.body, attest: "B", from: plainNumber },
      { call: otherSeat.body, attest: "B", from: plainNumber },
    ];
    expect(onSeat.body.seat_id).toBe(seatId);
    for (const { call, attest, from } of cases) {
      expect(call.stir_shaken?.attestation).toBe(attest);
      const identity = call.stir_shaken!.identity;
      const { payload, protectedHeader } = await compactVerify(identity, key, {
        algorithms: ["ES256"],
      });
      expect(protectedHeader).toEqual({
        alg: "ES256",
        ppt: "shaken",
        typ: "passport",
        x5u: `${PUBLIC_URL}/.well-known/stir-shaken/cert.pem`,
      });
      const claims = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
      expect(claims).toMatchObject({
        attest,
        dest: { tn: ["15550100000"] },
        orig: { tn: from.slice(1) },
      });
      expect(Math.abs((claims.iat as number) - Date.now() / 1000)).toBeLessThan(30);
      expect(claims.origid).toMatch(
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      // RFC 8225 §9: claims in lexicographic order without whitespace.
      expect(Object.keys(claims)).toEqual(["attest", "dest", "iat", "orig", "origid"]);
      expect(decodeProtectedHeader(identity).x5u).toBe(
        `${PUBLIC_URL}/.well-known/stir-shaken/cert.pem`,
      );
    }
    // The carrier was handed exactly that PASSporT as the Identity header.
    await eventually(
      async () =>
        (
          await p.db.query("SELECT identity FROM call_control.sandbox_dials WHERE call_id = $1", [
            onSeat.body.id,
          ])
        ).rows,
      (rows) => rows.length === 1,
    ).then((rows) => expect(rows[0].identity).toBe(onSeat.body.stir_shaken!.identity));
  });

  it("one Idempotency-Key places one call on the network: 25 concurrent retries, a lost gateway store", async () => {
    const key = `retry-${Date.now()}`;
    const json = { to: "+15550100000", from: plainNumber, agent: "alice" };
    const responses = await Promise.all(
      Array.from({ length: 25 }, () =>
        p.request("/v1/api/calls/outbound", {
          method: "POST",
          token,
          json,
          headers: { "Idempotency-Key": key },
        }),
      ),
    );
    const ids = new Set<string>();
    for (const response of responses) {
      expect(response.status).toBe(201);
      ids.add(((await response.json()) as Call).id);
    }
    expect(ids.size).toBe(1);
    const [id] = [...ids];
    const dials = () =>
      p.db.query<{ dials: number }>(
        "SELECT dials FROM call_control.sandbox_dials WHERE call_id = $1",
        [id],
      );
    expect((await eventually(dials, (r) => r.rows.length === 1)).rows).toEqual([{ dials: 1 }]);

    // The gateway forgets every key; the retry still finds the call the key placed.
    await p.db.query("DELETE FROM gateway.idempotency_keys");
    const retry = await p.request("/v1/api/calls/outbound", {
      method: "POST",
      token,
      json,
      headers: { "Idempotency-Key": key },
    });
    expect(retry.status).toBe(201);
    expect(((await retry.json()) as Call).id).toBe(id);
    const rows = await p.db.query(
      "SELECT count(*)::int AS n FROM call_control.calls WHERE account_id = $1 AND idempotency_key = $2",
      [p.accountId, key],
    );
    expect(rows.rows[0].n).toBe(1);
    expect((await dials()).rows).toEqual([{ dials: 1 }]);

    // Same key, another request, with the gateway's store gone again: the service refuses it.
    await p.db.query("DELETE FROM gateway.idempotency_keys");
    const mismatch = await p.request("/v1/api/calls/outbound", {
      method: "POST",
      token,
      json: { ...json, to: "+15550100001" },
      headers: { "Idempotency-Key": key },
    });
    expect(mismatch.status).toBe(409);
    expect(((await mismatch.json()) as { type: string }).type).toMatch(/\/idempotency-mismatch$/);
  });

  it("25 concurrent creations with one key straight to the service (no gateway store at all) make one call", async () => {
    const { callcontrol } = await import("@switchboard/proto");
    const { callUnary, createClient } = await import("@switchboard/kit");
    const client = createClient(
      callcontrol.CallControlServiceClient,
      `127.0.0.1:${p.callControl().port}`,
    );
    const key = `direct-${Date.now()}`;
    const replies = await Promise.all(
      Array.from({ length: 25 }, () =>
        callUnary(
          "call-control",
          client,
          client.createOutboundCall,
          {
            accountId: p.accountId,
            to: "+15550100000",
            from: plainNumber,
            agent: "alice",
          },
          { deadlineMs: 30_000, metadata: { "idempotency-key": key } },
        ),
      ),
    );
    client.close();
    expect(new Set(replies.map((r) => r.call!.id)).size).toBe(1);
    expect(replies.filter((r) => !r.replayed)).toHaveLength(1);
    const id = replies[0]!.call!.id;
    const dials = await eventually(
      () => p.db.query("SELECT dials FROM call_control.sandbox_dials WHERE call_id = $1", [id]),
      (r) => r.rows.length === 1,
    );
    expect(dials.rows).toEqual([{ dials: 1 }]);
  });

  it("a key straight to the service answers with its call after its agent is deleted", async () => {
    const { callcontrol } = await import("@switchboard/proto");
    const { callUnary, createClient } = await import("@switchboard/kit");
    const made = await p.request("/v1/api/agents", {
      method: "POST",
      token,
      json: { name: "gone" },
    });
    const agentId = ((await made.json()) as { id: string }).id;
    const client = createClient(
      callcontrol.CallControlServiceClient,
      `127.0.0.1:${p.callControl().port}`,
    );
    const key = `agent-gone-${Date.now()}`;
    const create = () =>
      callUnary(
        "call-control",
        client,
        client.createOutboundCall,
        { accountId: p.accountId, to: "+15550100000", from: plainNumber, agent: "gone" },
        { deadlineMs: 30_000, metadata: { "idempotency-key": key } },
      );
    try {
      const first = await create();
      const deleted = await p.request(`/v1/api/agents/${agentId}`, { method: "DELETE", token });
      expect(deleted.status).toBe(204);
      const again = await create();
      expect(again.replayed).toBe(true);
      expect(again.call!.id).toBe(first.call!.id);
      // Without the key, the same request now names no agent of the account.
      const unkeyed = await p.request("/v1/api/calls/outbound", {
        method: "POST",
        token,
        json: { to: "+15550100000", from: plainNumber, agent: "gone" },
      });
      expect(unkeyed.status).toBe(422);
    } finally {
      client.close();
    }
  });

  it("a seat's max_concurrent_calls holds under a race: 409 seat-busy beyond it", async () => {
    const seat = await p.request("/v1/api/seats", {
      method: "POST",
      token,
      json: { name: "tight", max_concurrent_calls: 3 },
    });
    const tight = ((await seat.json()) as { id: string }).id;
    const number = await p.assignNumber(token, tight);
    const attempts = await Promise.all(
      Array.from({ length: 20 }, (_, i) => place({ to: `+1415555${2000 + i}`, from: number })),
    );
    const created = attempts.filter((a) => a.status === 201);
    const busy = attempts.filter((a) => a.status === 409);
    expect(created).toHaveLength(3);
    expect(busy).toHaveLength(17);
    expect(busy.every((a) => a.body.code === "SEAT_BUSY")).toBe(true);
    const state = (await (await p.request(`/v1/api/seats/${tight}`, { token })).json()) as {
      active_calls: number;
    };
    expect(state.active_calls).toBe(3);
    // A refused placement leaves nothing: no call, no dial timer, no event.
    const left = await p.db.query<{ calls: number; orphans: number }>(
      `SELECT (SELECT count(*)::int FROM call_control.calls WHERE from_number = $1) AS calls,
              (SELECT count(*)::int FROM call_control.outbox o
                WHERE NOT EXISTS (SELECT 1 FROM call_control.calls c WHERE c.id = o.resource_id)
                  AND o.type LIKE 'call.%')
            + (SELECT count(*)::int FROM call_control.scheduled_actions a
                WHERE NOT EXISTS (SELECT 1 FROM call_control.calls c WHERE c.id = a.call_id))
              AS orphans`,
      [number],
    );
    expect(left.rows[0]).toEqual({ calls: 3, orphans: 0 });
    // Room again once a call ends.
    await p.request(`/v1/api/calls/${created[0]!.body.id}/hangup`, { method: "POST", token });
    expect((await place({ to: "+14155552999", from: number })).status).toBe(201);
  });

  it("every validation failure is a 422 with errors[] pointers, and changes nothing", async () => {
    const before = await p.db.query("SELECT count(*)::int AS n FROM call_control.calls");
    const cases: [Record<string, unknown>, string][] = [
      [{ to: undefined }, "#/to"],
      [{ to: "555-0100" }, "#/to"],
      [{ to: "+15550100000", from: "14155550100" }, "#/from"],
      [{ to: "+15550100000", agent: "Alice!" }, "#/agent"],
      [{ to: "+15550100000", agent: "nobody" }, "#/agent"],
      [{ to: "+15550100000", seat_id: "desk-1" }, "#/seat_id"],
      [{ to: "+15550100000", seat_id: "seat_01jd0000000000000000000000" }, "#/seat_id"],
      [{ to: "+15550100000", timeout_seconds: 4 }, "#/timeout_seconds"],
      [{ to: "+15550100000", timeout_seconds: 121 }, "#/timeout_seconds"],
      [{ to: "+15550100000", time_limit_seconds: 0 }, "#/time_limit_seconds"],
      [{ to: "+15550100000", time_limit_seconds: 2.5 }, "#/time_limit_seconds"],
      [{ to: "+15550100000", client_state: "é".repeat(513) }, "#/client_state"],
      [{ to: "+15550100000", colour: "blue" }, "#/colour"],
    ];
    for (const [json, pointer] of cases) {
      const { status, body } = await place(json);
      expect(status, pointer).toBe(422);
      expect(body.code).toBe("VALIDATION_FAILED");
      expect(body.errors?.map((e) => e.pointer)).toContain(pointer);
    }
    const notOwned = await place({ to: "+15550100000", from: "+15550100009" });
    expect(notOwned.status).toBe(422);
    expect(notOwned.body.code).toBe("CALLER_ID_NOT_OWNED");
    const after = await p.db.query("SELECT count(*)::int AS n FROM call_control.calls");
    expect(after.rows[0].n).toBe(before.rows[0].n);
  });

  it("another account's call is 404, and lists filter and page with a bound cursor", async () => {
    const mine = await place({ to: "+15550101231" });
    const other = await p.otherToken();
    for (const [path, method] of [
      [`/v1/api/calls/${mine.body.id}`, "GET"],
      [`/v1/api/calls/${mine.body.id}/hangup`, "POST"],
    ] as const) {
      const response = await p.request(path, { method, token: other });
      expect(response.status).toBe(404);
    }
    const theirs = (await (await p.request("/v1/api/calls", { token: other })).json()) as {
      data: Call[];
    };
    expect(theirs.data).toEqual([]);

    await ended(mine.body.id);
    const first = await p.request("/v1/api/calls?direction=outbound&status=busy&limit=1", {
      token,
    });
    const page = (await first.json()) as {
      data: Call[];
      next_cursor: string | null;
      has_more: boolean;
    };
    expect(page.data[0]!.id).toBe(mine.body.id);
    expect(page.has_more).toBe(true);
    expect(first.headers.get("link")).toContain('rel="next"');
    const next = await p.request(
      `/v1/api/calls?direction=outbound&status=busy&limit=1&cursor=${page.next_cursor}`,
      { token },
    );
    const second = (await next.json()) as { data: Call[] };
    expect(second.data[0]!.id < mine.body.id).toBe(true);
    expect(second.data.every((c) => c.status === "busy")).toBe(true);
    const rebound = await p.request(
      `/v1/api/calls?status=completed&limit=1&cursor=${page.next_cursor}`,
      { token },
    );
    expect(rebound.status).toBe(400);
    expect(await rebound.json()).toMatchObject({ code: "INVALID_CURSOR" });
    const bad = await p.request("/v1/api/calls?status=ringing_out", { token });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { errors: { pointer: string }[] }).errors[0]!.pointer).toBe(
      "#/query/status",
    );
  });
});
