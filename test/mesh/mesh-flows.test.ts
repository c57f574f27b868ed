import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkHealth, createHealthClient } from "@switchboard/kit";
import { createTemplate, sendWithConsent } from "@switchboard/test-support/fixtures/messages";
import { startReceiver, type Receiver } from "@switchboard/test-support/fixtures/webhook-receiver";
import {
  assignNumber,
  eventually,
  startMeshHarness,
  type MeshHarness,
} from "./support/mesh-harness.js";

type Json = Record<string, unknown>;
const json = async <T = Json>(response: Response) => (await response.json()) as T;

/** A refusal of a request that was not executed: 503 problem+json, SERVICE_UNAVAILABLE, Retry-After. */
const refusalShape = (r: {
  status: number;
  retryAfter: string | null;
  type: string;
  code: string;
}) =>
  r.status === 503 &&
  /^[1-9][0-9]*$/.test(r.retryAfter ?? "") &&
  r.type === "application/problem+json" &&
  r.code === "SERVICE_UNAVAILABLE";

/**
 * The mesh mode: every component its own process (gateway, inventory, call-control, messaging,
 * usage, webhook) on real PostgreSQL and Redis, started by the same supervisor as `npm run mesh`.
 */
describe("the mesh: each component its own process", () => {
  let h: MeshHarness;
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
    h = await startMeshHarness({
      env: {
        SANDBOX_CALL_SECONDS: "1",
        SANDBOX_RING_DELAY_MS: "50",
        CALL_TIMER_POLL_MS: "100",
        SANDBOX_RECEIPT_DELAY_MS: "100",
        HOLD_LIMIT_PER_ACCOUNT: "10000",
        WEBHOOK_ALLOW_PRIVATE_HOSTS: "localhost:*",
        WEBHOOK_RETRY_SCHEDULE: "200ms,500ms",
        WEBHOOK_TIMEOUT_MS: "2000",
      },
      componentEnv: { "call-control": { CALL_DRAIN_SECONDS: "20" } },
    });
  });
  afterAll(async () => {
    await h?.stop();
    await receiver?.close();
  });

  it("token → search → hold → assign → outbound call → message → usage → webhook", async () => {
    const token = await h.token();
    const subscribed = await h.request("/v1/api/webhooks/subscriptions", {
      method: "POST",
      token,
      json: { url: receiver.url, events: ["number.*", "call.*", "message.*"] },
    });
    expect(subscribed.status).toBe(201);
    const subscription = await json<{ id: string; secret: string }>(subscribed);

    const search = await h.request("/v1/api/numbers/search?capabilities=voice,sms&limit=5", {
      token,
    });
    expect(search.status).toBe(200);
    const found = await json<{ data: { number: string; status: string }[] }>(search);
    expect(found.data).toHaveLength(5);
    const number = found.data[0]!.number;

    const held = await h.request("/v1/api/numbers/hold", {
      method: "POST",
      token,
      json: { number },
    });
    expect(held.status).toBe(201);
    const hold = await json<{ id: string; status: string }>(held);
    expect(hold.status).toBe("active");
    const holdRequestId = held.headers.get("x-request-id");

    const assigned = await h.request(`/v1/api/numbers/holds/${hold.id}/assign`, {
      method: "POST",
      token,
    });
    expect(assigned.status).toBe(200);
    expect(await json(assigned)).toMatchObject({
      status: "converted",
      phone_number: { status: "assigned" },
    });

    const agent = await h.request("/v1/api/agents", {
      method: "POST",
      token,
      json: { name: "alice" },
    });
    expect(agent.status).toBe(201);
    const placed = await h.request("/v1/api/calls/outbound", {
      method: "POST",
      token,
      json: { from: number, to: "+15550100000", agent: "alice" },
    });
    expect(placed.status).toBe(201);
    const call = await json<{ id: string; status: string }>(placed);
    const ended = await eventually(
      async () =>
        json<{ status: string; hangup_cause: string | null }>(
          await h.request(`/v1/api/calls/${call.id}`, { token }),
        ),
      (c) => c.status !== "queued" && c.hangup_cause !== null,
      "the call to end",
    );
    expect(ended).toMatchObject({ status: "completed", hangup_cause: "normal_clearing" });

    const template = await createTemplate(h, token, "Order {{n}} shipped", ["sms"], "mesh-order");
    const message = await sendWithConsent(h, token, {
      to: "+15550200010",
      from: number,
      templateId: template.id,
    });
    const delivered = await eventually(
      async () =>
        json<{ status: string }>(await h.request(`/v1/api/messages/${message.id}`, { token })),
      (m) => ["delivered", "undelivered", "failed", "expired"].includes(m.status),
      "the message to be delivered",
    );
    expect(delivered.status).toBe("delivered");

    // The ledger: business facts relayed from the services, and the gateway's api.request records.
    const records = await eventually(
      async () =>
        (
          await json<{ data: { kind: string; request_id: string | null }[] }>(
            await h.request("/v1/api/usage/events?limit=200", { token }),
          )
        ).data,
      (data) =>
        ["number.held", "number.assigned", "call.placed", "call.completed", "message.sent"].every(
          (kind) => data.some((r) => r.kind === kind),
        ) && data.some((r) => r.kind === "api.request" && r.request_id === holdRequestId),
      "the usage records",
    );
    expect(records.length).toBeGreaterThan(5);

    const types = ["number.held", "number.assigned", "call.completed", "message.delivered"];
    await eventually(
      async () => receiver.received.map((r) => String(r.headers["webhook-id"])),
      () => types.every((type) => receiver.received.some((r) => r.body.includes(`"${type}"`))),
      "the webhooks",
    );
    const verifier = new Webhook(subscription.secret);
    const verified = receiver.received.map(
      (r) =>
        verifier.verify(r.body, {
          "webhook-id": String(r.headers["webhook-id"]),
          "webhook-timestamp": String(r.headers["webhook-timestamp"]),
          "webhook-signature": String(r.headers["webhook-signature"]),
        }) as { type: string; data: Json },
    );
    for (const type of types) expect(verified.map((e) => e.type)).toContain(type);
    expect(verified.find((e) => e.type === "call.completed")?.data).toMatchObject({ id: call.id });
  });

  it("SIGTERM to inventory under load: every request succeeds or is refused unexecuted (503 Retry-After), and it restarts into service", async () => {
    const token = await h.token("numbers:read numbers:write");
    const { rows } = await h.db.query<{ e164: string }>(
      "SELECT e164 FROM inventory.numbers WHERE assigned_account IS NULL AND hold_id IS NULL ORDER BY id LIMIT 1500",
    );
    const numbers = rows.map((r) => r.e164);
    interface Outcome {
      hold: string | undefined;
      status: number;
      retryAfter: string | null;
      type: string;
      code: string;
    }
    const outcomes: Outcome[] = [];
    let running = true;
    const client = async (worker: number) => {
      for (let i = 0; running; i += 1) {
        const hold = (worker + i) % 2 === 0 ? numbers.shift() : undefined;
        const response = hold
          ? await h.request("/v1/api/numbers/hold", {
              method: "POST",
              token,
              json: { number: hold },
            })
          : await h.request("/v1/api/numbers/search?limit=5", { token });
        const body = await json<{ code?: string }>(response);
        outcomes.push({
          hold,
          status: response.status,
          retryAfter: response.headers.get("retry-after"),
          type: (response.headers.get("content-type") ?? "").split(";")[0]!,
          code: body.code ?? "",
        });
      }
    };
    const inventory = h.mesh.children.inventory;
    const firstPid = inventory.pid;
    const traffic = Promise.all(Array.from({ length: 6 }, (_, worker) => client(worker)));
    try {
      await eventually(
        async () => outcomes.length,
        (n) => n >= 60,
        "traffic to flow",
      );
      expect(inventory.kill("SIGTERM")).toBe(true);
      // It drains and exits by itself, well inside its grace period.
      expect(await inventory.waitForExit()).toEqual({ code: 0, signal: null });
      await inventory.waitReady(30_000);
      expect(inventory.pid).not.toBe(firstPid);
      const afterRestart = outcomes.length;
      await eventually(
        async () => outcomes.slice(afterRestart).filter((o) => o.status === 201).length,
        (n) => n >= 10,
        "holds to succeed after the restart",
      );
    } finally {
      running = false;
      await traffic;
    }

    const health = await eventually(
      async () => json<{ status: string; checks: Json }>(await h.request("/api/health")),
      (r) => r.status === "pass",
      "health to pass again",
    );
    expect(health.checks.inventory).toBe("pass");

    const statuses = new Set(outcomes.map((o) => o.status));
    expect([...statuses].filter((s) => ![200, 201, 503].includes(s))).toEqual([]);
    const refused = outcomes.filter((o) => o.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect(refusalShape(r), JSON.stringify(r)).toBe(true);
    // Not executed: a refused hold left no hold; an accepted one has its hold.
    const holdsOf = async (list: string[]) =>
      (
        await h.db.query<{ e164: string }>(
          `SELECT n.e164 FROM inventory.holds x JOIN inventory.numbers n ON n.id = x.number_id
            WHERE n.e164 = ANY($1)`,
          [list],
        )
      ).rows.map((r) => r.e164);
    const refusedHolds = refused.flatMap((o) => (o.hold ? [o.hold] : []));
    const acceptedHolds = outcomes.filter((o) => o.status === 201).map((o) => o.hold!);
    expect(await holdsOf(refusedHolds)).toEqual([]);
    expect(new Set(await holdsOf(acceptedHolds))).toEqual(new Set(acceptedHolds));
    expect(h.notices.some((n) => n.startsWith("inventory exited (code 0)"))).toBe(true);
  });

  it("SIGTERM to call-control: it takes no new call, the live call ends on time in the draining process, then it exits and restarts", async () => {
    const token = await h.token();
    await h.request("/v1/api/agents", { method: "POST", token, json: { name: "drain" } });
    const from = await assignNumber(h, token, "voice");
    const place = () =>
      h.request("/v1/api/calls/outbound", {
        method: "POST",
        token,
        // Outside the sandbox's scripted range: answers and stays up until its time limit.
        json: { from, to: "+15557770123", agent: "drain", time_limit_seconds: 3 },
      });
    // A 503 is a refusal of what was not executed (the previous test restarted inventory, and
    // call-control's channel to it may still be backing off): a client tries again.
    const placed = await eventually(place, (r) => r.status !== 503, "the call to be taken");
    expect(placed.status).toBe(201);
    const { id } = await json<{ id: string }>(placed);
    const answered = await eventually(
      async () =>
        json<{ status: string; answered_at: string | null }>(
          await h.request(`/v1/api/calls/${id}`, { token }),
        ),
      (c) => c.status === "in_progress",
      "the call to be answered",
    );

    const callControl = h.mesh.children["call-control"];
    const firstPid = callControl.pid;
    let exitedAt: number | undefined;
    const exited = callControl.waitForExit().then((exit) => {
      exitedAt = Date.now();
      return exit;
    });
    const signalledAt = Date.now();
    expect(callControl.kill("SIGTERM")).toBe(true);
    const health = createHealthClient(h.mesh.addresses.CALL_CONTROL_ADDR!);
    try {
      await eventually(
        () => checkHealth(health, "", 500),
        (s) => s !== "SERVING",
        "NOT_SERVING",
      );
    } finally {
      health.close();
    }

    const refused = await place();
    const problem = await json<{ code: string }>(refused);
    expect(
      refusalShape({
        status: refused.status,
        retryAfter: refused.headers.get("retry-after"),
        type: (refused.headers.get("content-type") ?? "").split(";")[0]!,
        code: problem.code,
      }),
    ).toBe(true);
    expect(exitedAt).toBeUndefined();

    const completed = await eventually(
      async () =>
        (
          await h.db.query<{ occurred_at: Date }>(
            "SELECT occurred_at FROM call_control.outbox WHERE resource_id = $1 AND type = 'call.completed'",
            [id],
          )
        ).rows[0],
      (row) => row !== undefined,
      "call.completed",
    );
    expect(await exited).toEqual({ code: 0, signal: null });
    // Written by the draining process (the next one starts only after it exited), on time.
    expect(completed!.occurred_at.getTime()).toBeLessThan(exitedAt!);
    const late = completed!.occurred_at.getTime() - Date.parse(answered.answered_at!) - 3_000;
    expect(late).toBeLessThan(1_000);
    expect(exitedAt! - signalledAt).toBeLessThan(20_000);
    const { rows } = await h.db.query<{ status: string; hangup_cause: string }>(
      "SELECT status, hangup_cause FROM call_control.calls WHERE from_number = $1",
      [from],
    );
    expect(rows).toEqual([{ status: "completed", hangup_cause: "time_limit" }]);

    await callControl.waitReady(30_000);
    expect(callControl.pid).not.toBe(firstPid);
    const after = await eventually(
      async () => h.request(`/v1/api/calls/${id}`, { token }),
      (r) => r.status === 200,
      "the restarted call-control to answer",
    );
    expect(await json(after)).toMatchObject({ status: "completed", hangup_cause: "time_limit" });
  });
  it("SIGTERM to the gateway with keep-alive clients: replies in flight are sent, it exits at once (not after the keep-alive timeout) and restarts", async () => {
    const token = await h.token("numbers:read");
    const gateway = h.mesh.children.gateway;
    const firstPid = gateway.pid;
    const statuses: number[] = [];
    let refused = 0;
    let running = true;
    const client = async () => {
      while (running) {
        try {
          const response = await h.request("/v1/api/numbers/search?limit=5", { token });
          await response.arrayBuffer();
          statuses.push(response.status);
        } catch {
          // No connection (closed, refused): the request never reached a gateway.
          refused += 1;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
      }
    };
    const traffic = Promise.all(Array.from({ length: 4 }, client));
    try {
      await eventually(
        async () => statuses.length,
        (n) => n >= 40,
        "traffic to flow",
      );
      const signalledAt = Date.now();
      expect(gateway.kill("SIGTERM")).toBe(true);
      expect(await gateway.waitForExit()).toEqual({ code: 0, signal: null });
      expect(Date.now() - signalledAt).toBeLessThan(10_000);
      await gateway.waitReady(30_000);
      expect(gateway.pid).not.toBe(firstPid);
      const resumed = statuses.length;
      await eventually(
        async () => statuses.length,
        (n) => n >= resumed + 20,
        "traffic again",
      );
    } finally {
      running = false;
      await traffic;
    }
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    expect(refused).toBeGreaterThan(0);
  });
});
