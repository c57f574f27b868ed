import type { SmokeStepName, SmokeStepStatus } from "./step-names.js";
import { failureDetail, StepSkipped, type StepScope } from "./step-scope.js";

export interface StepResult {
  name: SmokeStepName;
  status: SmokeStepStatus;
  duration_ms: number;
  detail?: string;
}

/** One step of the plan. Steps start as soon as what they wait for has finished. */
export interface StepSpec {
  name: SmokeStepName;
  /** Steps that must pass first; when one does not, this step is skipped. */
  needs?: readonly SmokeStepName[];
  /** Steps that must have finished first, whatever their outcome. */
  after?: readonly SmokeStepName[];
  /** The step's own time budget in milliseconds. */
  budgetMs: number;
  /** The latest the step may end (epoch ms); the plan's step deadline when absent. */
  endsBy?: number;
  /** Resolves with the pass detail; throws StepFailure, StepSkipped or a backend's error. */
  run(scope: StepScope): Promise<string | undefined>;
}

export interface RunOptions {
  /** Epoch ms by which every step without its own `endsBy` must have ended. */
  stepsEnd: number;
  scope(deadline: number, signal: AbortSignal): StepScope;
  /** An error no step could describe safely (logged, reported as "internal error"). */
  onUnexpected(step: SmokeStepName, error: unknown): void;
}

/**
 * Runs the plan as a dependency graph, each step under min(its budget, its end) and reported
 * with its wall time. A step that times out is `fail` naming what it was waiting for; work it
 * left running is bounded by the same deadline (every gRPC call and poll honours it).
 */
export async function runSteps(specs: readonly StepSpec[], options: RunOptions) {
  const started = new Map<SmokeStepName, Promise<StepResult>>();
  const resultOf = (name: SmokeStepName) => {
    const result = started.get(name);
    if (!result) throw new Error(`step ${name} is used before it is declared`);
    return result;
  };
  for (const spec of specs) {
    const needs = (spec.needs ?? []).map(resultOf);
    const after = (spec.after ?? []).map(resultOf);
    started.set(
      spec.name,
      Promise.all([Promise.all(needs), Promise.all(after)]).then(([required]) => {
        const missing = required.filter((r) => r.status !== "pass").map((r) => r.name);
        if (missing.length > 0) {
          return {
            name: spec.name,
            status: "skipped" as const,
            duration_ms: 0,
            detail: `skipped: ${missing.join(", ")} did not pass`,
          };
        }
        return runOne(spec, options);
      }),
    );
  }
  return Promise.all(specs.map((spec) => resultOf(spec.name)));
}

async function runOne(spec: StepSpec, options: RunOptions): Promise<StepResult> {
  const startedAt = performance.now();
  const elapsed = () => Math.round(performance.now() - startedAt);
  const now = Date.now();
  const deadline = Math.min(now + spec.budgetMs, spec.endsBy ?? options.stepsEnd);
  const budget = deadline - now;
  if (budget <= 0) {
    return { name: spec.name, status: "fail", duration_ms: 0, detail: "no time left to run" };
  }
  const controller = new AbortController();
  const scope = options.scope(deadline, controller.signal);
  const work = spec.run(scope);
  // The race may leave `work` behind; its later failure is not this request's concern.
  work.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), budget);
  });
  try {
    const outcome = await Promise.race([work, timeout]);
    if (outcome === "timeout") {
      const waiting = scope.waitingFor ? ` waiting for ${scope.waitingFor}` : "";
      return {
        name: spec.name,
        status: "fail",
        duration_ms: elapsed(),
        detail: `timed out after ${budget} ms${waiting}`,
      };
    }
    return {
      name: spec.name,
      status: "pass",
      duration_ms: elapsed(),
      ...(outcome !== undefined ? { detail: outcome } : {}),
    };
  } catch (error) {
    if (error instanceof StepSkipped) {
      return { name: spec.name, status: "skipped", duration_ms: elapsed(), detail: error.detail };
    }
    const detail = failureDetail(error);
    if (detail === undefined) options.onUnexpected(spec.name, error);
    return {
      name: spec.name,
      status: "fail",
      duration_ms: elapsed(),
      detail: detail ?? "internal error",
    };
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}
