import type { SmokeStepName } from "./step-names.js";
import type { SmokeState } from "./smoke-state.js";
import { StepFailure } from "./step-scope.js";
import type { StepSpec } from "./step-runner.js";

/**
 * cleanup: undoes whatever the run left (holds not released, calls not seen to end, the smoke's
 * webhook subscription), all at once, within what is left of the smoke's deadline. A failed
 * undo fails the step and names what is left; holds expire on their own 60 s later.
 */
export function cleanupStep(
  state: SmokeState,
  options: { after: readonly SmokeStepName[]; budgetMs: number; endsBy: number },
): StepSpec {
  return {
    name: "cleanup",
    after: options.after,
    budgetMs: options.budgetMs,
    endsBy: options.endsBy,
    run: async (scope) => {
      const pending = [...state.pending.values()];
      if (pending.length === 0) return "nothing left to undo";
      const outcomes = await Promise.allSettled(pending.map((p) => p.undo(scope)));
      const left = pending.filter((_, i) => outcomes[i]!.status === "rejected");
      if (left.length > 0) {
        throw new StepFailure(`could not undo: ${left.map((p) => p.label).join(", ")}`);
      }
      return `undone: ${pending.map((p) => p.label).join(", ")}`;
    },
  };
}
