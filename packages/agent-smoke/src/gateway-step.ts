import type { DependencyCheck } from "@switchboard/kit";
import { StepFailure } from "./step-scope.js";
import type { StepSpec } from "./step-runner.js";

/**
 * gateway: the request got here through authentication, the rate limit and the idempotency
 * layer; this checks the gateway's own stores (its database, Redis when configured) and that
 * replies land their api.request records.
 */
export function gatewayStep(options: {
  checks: Record<string, DependencyCheck>;
  recordsOn: boolean;
  budgetMs: number;
}): StepSpec {
  return {
    name: "gateway",
    budgetMs: options.budgetMs,
    run: async () => {
      const names = Object.keys(options.checks);
      const states = await Promise.all(
        names.map((name) => options.checks[name]!().catch(() => "warn" as const)),
      );
      const notReady = names.filter((_, i) => states[i] !== "pass");
      if (notReady.length > 0) throw new StepFailure(`not ready: ${notReady.join(", ")}`);
      if (!options.recordsOn) throw new StepFailure("replies land no api.request records");
      return `authenticated; ${names.join(", ")} ready; api.request records on`;
    },
  };
}
