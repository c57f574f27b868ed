import { DomainError } from "@switchboard/kit";
import { callcontrol, inventory } from "@switchboard/proto";
import { findListed } from "./find-in-pages.js";
import { holdOneOf } from "./number-steps.js";
import { runKey, type SmokeResources, type SmokeState } from "./smoke-state.js";
import { StepFailure, type StepScope } from "./step-scope.js";
import type { StepSpec } from "./step-runner.js";

/** The marker: the agent, seat and route the smoke keeps in an account are all named this. */
export const smokeMarker = "smoke";
const smokeSeatCalls = 4;
const numberCapabilities = [inventory.Capability.VOICE, inventory.Capability.SMS];

/**
 * The account's smoke resources, reused across runs: the agent named `smoke`, the seat named
 * `smoke`, a voice+sms number assigned to that seat (held and assigned on the first run only)
 * and the route named `smoke` that sends that number's inbound calls to the agent and seat.
 * Returns them and what had to be created.
 */
export async function ensureSmokeResources(
  scope: StepScope,
  state: SmokeState,
): Promise<{ resources: SmokeResources; created: string[] }> {
  const created: string[] = [];
  const agent = await ensureAgent(scope, state, created);
  const seatId = await ensureSeat(scope, state, created);
  const number = await ensureNumber(scope, state, seatId, created);
  const routeId = await ensureRoute(scope, state, { agent, seatId, number }, created);
  return { resources: { agent, seatId, number, routeId }, created };
}

async function ensureAgent(scope: StepScope, state: SmokeState, created: string[]) {
  const cc = state.backends.callControl;
  const existing = await findListed(
    scope,
    {
      backend: cc,
      method: (c) => c.listAgents,
      request: { accountId: state.accountId },
      items: (r) => r.agents,
    },
    (agent) => agent.name === smokeMarker,
  );
  if (existing) return smokeMarker;
  try {
    await scope.rpc(cc, (c) => c.createAgent, {
      accountId: state.accountId,
      name: smokeMarker,
      description: "Switchboard agent smoke check (POST /api/agent/smoke)",
    });
    created.push("agent");
  } catch (error) {
    // A concurrent smoke created it first.
    if (!(error instanceof DomainError && error.kind === "conflict")) throw error;
  }
  return smokeMarker;
}

async function ensureSeat(scope: StepScope, state: SmokeState, created: string[]) {
  const cc = state.backends.callControl;
  const existing = await findListed(
    scope,
    {
      backend: cc,
      method: (c) => c.listSeats,
      request: { accountId: state.accountId },
      items: (r) => r.seats,
    },
    (seat) => seat.name === smokeMarker && seat.status === callcontrol.SeatStatus.ACTIVE,
  );
  if (existing) return existing.id;
  const { seat } = await scope.rpc(cc, (c) => c.createSeat, {
    accountId: state.accountId,
    name: smokeMarker,
    maxConcurrentCalls: smokeSeatCalls,
  });
  if (!seat) throw new StepFailure("call-control answered without a seat");
  created.push("seat");
  return seat.id;
}

async function ensureNumber(
  scope: StepScope,
  state: SmokeState,
  seatId: string,
  created: string[],
): Promise<string> {
  const inv = state.backends.inventory;
  const existing = await findListed(
    scope,
    {
      backend: inv,
      method: (c) => c.listNumbers,
      request: { accountId: state.accountId },
      items: (r) => r.numbers,
    },
    (n) => n.seatId === seatId && numberCapabilities.every((c) => n.capabilities.includes(c)),
  );
  if (existing) return existing.number;
  const { numbers } = await scope.rpc(inv, (c) => c.searchNumbers, {
    accountId: state.accountId,
    capabilities: numberCapabilities,
    limit: 10,
    cursor: "",
  });
  if (numbers.length === 0) throw new StepFailure("no available number has voice and sms");
  const hold = await holdOneOf(scope, state, numbers, "resources.hold");
  const { number } = await scope.rpc(
    inv,
    (c) => c.assignHold,
    { accountId: state.accountId, holdId: hold.id, seatId },
    runKey(state, "resources.assign"),
  );
  state.pending.delete(hold.id);
  if (!number) throw new StepFailure("the inventory answered without the assigned number");
  created.push("number");
  return number.number;
}

async function ensureRoute(
  scope: StepScope,
  state: SmokeState,
  want: { agent: string; seatId: string; number: string },
  created: string[],
): Promise<string> {
  const cc = state.backends.callControl;
  const existing = await findListed(
    scope,
    {
      backend: cc,
      method: (c) => c.listRoutes,
      request: { accountId: state.accountId },
      items: (r) => r.routes,
    },
    (route) => route.name === smokeMarker,
  );
  if (!existing) {
    const { route } = await scope.rpc(cc, (c) => c.createRoute, {
      accountId: state.accountId,
      name: smokeMarker,
      numbers: [want.number],
      agent: want.agent,
      seatId: want.seatId,
    });
    if (!route) throw new StepFailure("call-control answered without a route");
    created.push("route");
    return route.id;
  }
  const current =
    existing.agent === want.agent &&
    existing.seatId === want.seatId &&
    existing.numbers.length === 1 &&
    existing.numbers[0] === want.number;
  if (!current) {
    await scope.rpc(cc, (c) => c.updateRoute, {
      accountId: state.accountId,
      routeId: existing.id,
      numbers: { numbers: [want.number] },
      agent: want.agent,
      seatId: want.seatId,
    });
  }
  return existing.id;
}

/** resources: the smoke's agent, seat, number and route, found or created (see above). */
export function resourcesStep(state: SmokeState, budgetMs: number): StepSpec {
  return {
    name: "resources",
    budgetMs,
    run: async (scope) => {
      const { resources, created } = await ensureSmokeResources(scope, state);
      state.resources = resources;
      const made = created.length > 0 ? `created ${created.join(", ")}` : "all reused";
      return `agent ${resources.agent}, ${resources.seatId}, ${resources.number}, ${resources.routeId} (${made})`;
    },
  };
}
