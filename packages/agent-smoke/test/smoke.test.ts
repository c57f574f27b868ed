import type { Client } from "@grpc/grpc-js";
import { createLogger, DomainError } from "@switchboard/kit";
import { inventory, usage } from "@switchboard/proto";
import { describe, expect, it } from "vitest";
import {
  createSmoke,
  smokeStepNames,
  type SmokeBackend,
  type SmokeCallOptions,
  type SmokePorts,
  type SmokeRunFact,
} from "../src/index.js";

type Handler = (request: Record<string, unknown>) => unknown;

interface Made {
  method: string;
  request: Record<string, unknown>;
  options: SmokeCallOptions;
}

/**
 * A backend port over handlers by method name: the method the step picks from its client is
 * read off a stand-in client; a method without a handler is a service that is down.
 */
function fakeBackend<C extends Client>(
  name: string,
  handlers: Record<string, Handler>,
  made: Made[],
): SmokeBackend<C> {
  const client = new Proxy({}, { get: (_, method) => method }) as C;
  return {
    call: async (pick, request, options) => {
      const method = pick(client) as unknown as string;
      made.push({ method, request: request as Record<string, unknown>, options });
      const handler = handlers[method];
      if (!handler) throw new DomainError("service-unavailable", `${name} is not available`);
      return (await handler(request as Record<string, unknown>)) as never;
    },
  };
}

const candidate = inventory.PhoneNumber.fromPartial({ id: "num_1", number: "+14155550100" });

/** Only the inventory and the usage ledger answer: the number steps and their record pass. */
function ports(overrides: Partial<SmokePorts> = {}) {
  const made: Made[] = [];
  const facts: SmokeRunFact[] = [];
  const verified: usage.PublicKey[][] = [];
  const holds = new Map<string, inventory.Hold>();
  const key = usage.PublicKey.fromPartial({ kid: "k1", kty: "OKP", crv: "Ed25519", x: "AA" });
  const smokePorts: SmokePorts = {
    backends: {
      inventory: fakeBackend(
        "inventory",
        {
          searchNumbers: () => ({ numbers: [candidate], nextCursor: "" }),
          createHold: (r) => {
            const hold = inventory.Hold.fromPartial({
              id: `hld_${holds.size + 1}`,
              numberId: candidate.id,
              number: r.number as string,
              status: inventory.HoldStatus.ACTIVE,
            });
            holds.set(hold.id, hold);
            return { hold };
          },
          releaseHold: (r) => ({
            hold: { ...holds.get(r.holdId as string)!, status: inventory.HoldStatus.RELEASED },
          }),
        },
        made,
      ),
      callControl: fakeBackend("call-control", {}, made),
      messaging: fakeBackend("messaging", {}, made),
      webhook: fakeBackend("webhook", {}, made),
      usage: fakeBackend(
        "usage",
        {
          listUsageEvents: (r) => ({
            records: [
              usage.UsageRecord.fromPartial({
                id: "rec_1",
                resourceId: r.resourceId as string,
                attributes: { hold_id: "hld_1" },
              }),
            ],
            nextCursor: "",
          }),
          listSigningKeys: () => ({ keys: [key] }),
        },
        made,
      ),
    },
    settings: {
      timeoutMs: 10_000,
      stepTimeoutMs: 2_000,
      sandboxCallSeconds: 1,
      messageTo: "+15550209990",
      callTo: undefined,
    },
    grpcDeadlineMs: 5_000,
    carriers: { voice: "sandbox", messaging: "sandbox" },
    gatewayChecks: { postgres: () => Promise.resolve("pass") },
    recordsOn: true,
    verifyRecords: (keys) => {
      verified.push([...keys]);
      return () => Promise.resolve(true);
    },
    publishFact: (fact) => {
      facts.push(fact);
      return Promise.resolve();
    },
    logger: createLogger("agent-smoke-test", { level: "silent" }),
    ...overrides,
  };
  return { smokePorts, made, facts, verified, key };
}

const caller = { accountId: "acc_1", principal: "cli_1", requestId: "req_1" };

describe("the agent smoke on its ports alone", () => {
  it("drives the backends it is handed and reports every step in order", async () => {
    const { smokePorts, made, facts, verified, key } = ports();
    const run = await createSmoke(smokePorts).run(caller);

    expect(run.id).toMatch(/^smk_[0-9a-z]{26}$/);
    expect(run.steps.map((step) => step.name)).toEqual([...smokeStepNames]);
    const status = Object.fromEntries(run.steps.map((step) => [step.name, step.status]));
    expect(status).toEqual({
      gateway: "pass",
      "numbers.search": "pass",
      "numbers.hold": "pass",
      "numbers.release": "pass",
      resources: "fail",
      "calls.outbound": "skipped",
      "calls.inbound": "skipped",
      "messages.send": "skipped",
      "webhooks.delivery": "fail",
      "usage.records": "pass",
      cleanup: "pass",
    });
    const detail = (name: string) => run.steps.find((step) => step.name === name)!.detail;
    expect(detail("gateway")).toBe("authenticated; postgres ready; api.request records on");
    expect(detail("resources")).toBe("service-unavailable: call-control is not available");
    expect(detail("calls.outbound")).toBe("skipped: resources did not pass");
    expect(detail("usage.records")).toBe("1 records found and verified (number.held)");
    expect(detail("cleanup")).toBe("nothing left to undo");
    expect(run.status).toBe("fail");

    // Every call carries the caller's request id and a deadline; creations a per-run key.
    expect(made.every((m) => m.options.requestId === "req_1")).toBe(true);
    expect(made.every((m) => m.options.deadlineMs > 0 && m.options.deadlineMs <= 5_000)).toBe(true);
    const hold = made.find((m) => m.method === "createHold")!;
    expect(hold.request).toMatchObject({ accountId: "acc_1", number: candidate.number });
    expect(hold.options.idempotencyKey).toBe(`smoke.${run.id}.hold.0`);
    expect(verified).toEqual([[key]]);
    expect(facts).toEqual([
      {
        smokeId: run.id,
        accountId: "acc_1",
        principal: "cli_1",
        requestId: "req_1",
        status: "fail",
        startedAt: run.started_at,
        durationMs: run.duration_ms,
      },
    ]);
  });

  it("fails the gateway step on a store that is not ready, or without api.request records", async () => {
    const notReady = ports({
      gatewayChecks: {
        postgres: () => Promise.resolve("pass"),
        redis: () => Promise.resolve("warn"),
      },
    });
    const gatewayOf = async (smokePorts: SmokePorts) =>
      (await createSmoke(smokePorts).run(caller)).steps.find((step) => step.name === "gateway");
    expect(await gatewayOf(notReady.smokePorts)).toMatchObject({
      status: "fail",
      detail: "not ready: redis",
    });
    const recordsOff = ports({ recordsOn: false });
    expect(await gatewayOf(recordsOff.smokePorts)).toMatchObject({
      status: "fail",
      detail: "replies land no api.request records",
    });
  });

  it("fails a step whose backend does not answer in its budget, and masks what is not a domain error", async () => {
    const { smokePorts, made } = ports();
    const stalled = fakeBackend<never>(
      "inventory",
      { searchNumbers: () => new Promise(() => {}) },
      made,
    );
    const broken = fakeBackend<never>(
      "webhook",
      {
        getInternalSink: () => {
          throw new Error("connect ECONNREFUSED 10.0.0.7:50055");
        },
      },
      made,
    );
    const settings = { ...smokePorts.settings, stepTimeoutMs: 300 };
    const backends = { ...smokePorts.backends, inventory: stalled, webhook: broken };
    const run = await createSmoke({ ...smokePorts, settings, backends }).run(caller);
    const stepOf = (name: string) => run.steps.find((step) => step.name === name)!;
    expect(stepOf("numbers.search")).toMatchObject({
      status: "fail",
      detail: "timed out after 300 ms",
    });
    expect(stepOf("numbers.hold")).toMatchObject({ status: "skipped", duration_ms: 0 });
    expect(stepOf("webhooks.delivery")).toMatchObject({ status: "fail", detail: "internal error" });
    expect(run.duration_ms).toBeLessThan(smokePorts.settings.timeoutMs);
  });
});
