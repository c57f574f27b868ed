import { DomainError } from "@switchboard/kit";
import { inventory, wire } from "@switchboard/proto";
import { runKey, type SmokeState } from "./smoke-state.js";
import { StepFailure, type StepScope } from "./step-scope.js";
import type { StepSpec } from "./step-runner.js";

/** The shortest hold the inventory allows: a hold the smoke could not release soon expires. */
const holdTtlSeconds = 60;

/**
 * Holds the first of `candidates` nobody else holds (another request may take one between the
 * search and the hold) and registers its release with the cleanup.
 */
export async function holdOneOf(
  scope: StepScope,
  state: SmokeState,
  candidates: readonly inventory.PhoneNumber[],
  purpose: string,
): Promise<inventory.Hold> {
  const inv = state.backends.inventory;
  for (const [index, candidate] of candidates.entries()) {
    try {
      const { hold } = await scope.rpc(
        inv,
        (c) => c.createHold,
        { accountId: state.accountId, number: candidate.number, ttlSeconds: holdTtlSeconds },
        runKey(state, `${purpose}.${index}`),
      );
      if (!hold) throw new StepFailure("the inventory answered without a hold");
      state.pending.set(hold.id, {
        label: `hold ${hold.id}`,
        undo: (s) => releaseHold(s, state, hold.id).then(() => undefined),
      });
      return hold;
    } catch (error) {
      if (error instanceof DomainError && error.kind === "number-unavailable") continue;
      throw error;
    }
  }
  throw new StepFailure(`none of the ${candidates.length} numbers found could be held`);
}

/** Releases a hold; one that already ended (released, converted, expired) counts as undone. */
export async function releaseHold(
  scope: StepScope,
  state: SmokeState,
  holdId: string,
): Promise<inventory.Hold | undefined> {
  try {
    const { hold } = await scope.rpc(state.backends.inventory, (c) => c.releaseHold, {
      accountId: state.accountId,
      holdId,
    });
    state.pending.delete(holdId);
    return hold;
  } catch (error) {
    if (!(error instanceof DomainError && error.kind === "invalid-state")) throw error;
    state.pending.delete(holdId);
    return undefined;
  }
}

/** numbers.search → numbers.hold → numbers.release: the inventory's public path. */
export function numberSteps(state: SmokeState, budgetMs: number): StepSpec[] {
  return [
    {
      name: "numbers.search",
      budgetMs,
      run: async (scope) => {
        const { numbers } = await scope.rpc(state.backends.inventory, (c) => c.searchNumbers, {
          accountId: state.accountId,
          capabilities: [],
          limit: 10,
          cursor: "",
        });
        if (numbers.length === 0) throw new StepFailure("the search found no available number");
        state.candidates = numbers;
        return `${numbers.length} available numbers found`;
      },
    },
    {
      name: "numbers.hold",
      needs: ["numbers.search"],
      budgetMs,
      run: async (scope) => {
        const hold = await holdOneOf(scope, state, state.candidates, "hold");
        if (hold.status !== inventory.HoldStatus.ACTIVE) {
          throw new StepFailure(`the new hold is ${wire.holdStatus.spell(hold.status)}`);
        }
        state.hold = hold;
        state.records.set("numbers.hold", [
          { kind: "number.held", resourceId: hold.numberId, attributes: { hold_id: hold.id } },
        ]);
        return `${hold.id} on ${hold.number}`;
      },
    },
    {
      name: "numbers.release",
      needs: ["numbers.hold"],
      budgetMs,
      run: async (scope) => {
        const holdId = state.hold?.id ?? "";
        const released = await releaseHold(scope, state, holdId);
        if (released?.status !== inventory.HoldStatus.RELEASED) {
          throw new StepFailure(`${holdId} could not be released: it had already ended`);
        }
        return `${holdId} released`;
      },
    },
  ];
}
