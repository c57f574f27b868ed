import { newId } from "@switchboard/kit";
import { callSteps } from "./call-steps.js";
import { cleanupStep } from "./cleanup-step.js";
import { gatewayStep } from "./gateway-step.js";
import { messageStep } from "./message-step.js";
import { numberSteps } from "./number-steps.js";
import type { SmokePorts } from "./ports.js";
import { resourcesStep } from "./smoke-resources.js";
import { newSmokeState } from "./smoke-state.js";
import { createStepScope } from "./step-scope.js";
import { smokeStepNames, type SmokeStepName } from "./step-names.js";
import { runSteps, type StepResult } from "./step-runner.js";
import { usageStep } from "./usage-step.js";
import { webhookStep } from "./webhook-step.js";

export interface SmokeCaller {
  accountId: string;
  principal: string;
  requestId: string;
}

export interface SmokeRun {
  id: string;
  status: "pass" | "fail";
  started_at: string;
  duration_ms: number;
  steps: StepResult[];
}

export interface Smoke {
  run(caller: SmokeCaller): Promise<SmokeRun>;
}

/** Time kept back from the steps for the cleanup: 3 s, or a fifth of a short deadline. */
const cleanupReserveMs = (timeoutMs: number) => Math.min(3_000, Math.floor(timeoutMs / 5));

/**
 * The agent smoke: one run drives every service through the gRPC calls the public routes make,
 * in the caller's account, and reports each step. Independent steps run at once; a step whose
 * prerequisite did not pass is skipped; a backend that is down fails its own steps only; the
 * result is always a report, never an exception.
 */
export function createSmoke(deps: SmokePorts): Smoke {
  const { settings, logger } = deps;
  return {
    run: async (caller) => {
      const smokeId = newId("smk");
      const startedAt = new Date();
      const began = performance.now();
      const end = startedAt.getTime() + settings.timeoutMs;
      const state = newSmokeState({
        smokeId,
        accountId: caller.accountId,
        backends: deps.backends,
      });
      const budgetMs = settings.stepTimeoutMs;
      const before: SmokeStepName[] = smokeStepNames.filter((name) => name !== "cleanup");
      const steps = await runSteps(
        [
          gatewayStep({ checks: deps.gatewayChecks, recordsOn: deps.recordsOn, budgetMs }),
          ...numberSteps(state, budgetMs),
          resourcesStep(state, budgetMs),
          ...callSteps(state, {
            budgetMs,
            carrier: deps.carriers.voice,
            callSeconds: settings.sandboxCallSeconds,
            callTo: settings.callTo,
          }),
          messageStep(state, {
            budgetMs,
            carrier: deps.carriers.messaging,
            to: settings.messageTo,
          }),
          webhookStep(state, budgetMs),
          usageStep(state, { budgetMs, verifyRecords: deps.verifyRecords }),
          cleanupStep(state, { after: before, budgetMs, endsBy: end }),
        ],
        {
          stepsEnd: end - cleanupReserveMs(settings.timeoutMs),
          scope: (deadline, signal) =>
            createStepScope({
              deadline,
              signal,
              grpcDeadlineMs: deps.grpcDeadlineMs,
              requestId: caller.requestId,
            }),
          onUnexpected: (step, error) =>
            logger.error({ err: error, step, smokeId }, "a smoke step failed unexpectedly"),
        },
      );
      const status = steps.some((step) => step.status === "fail") ? "fail" : "pass";
      const durationMs = Math.round(performance.now() - began);
      await deps.publishFact({
        smokeId,
        accountId: caller.accountId,
        principal: caller.principal,
        requestId: caller.requestId,
        status,
        startedAt: startedAt.toISOString(),
        durationMs,
      });
      const failed = steps.filter((step) => step.status === "fail").map((step) => step.name);
      logger.info({ smokeId, status, durationMs, failed }, "agent smoke finished");
      return {
        id: smokeId,
        status,
        started_at: startedAt.toISOString(),
        duration_ms: durationMs,
        steps,
      };
    },
  };
}
