import { smokeStepNames, smokeStepStatuses } from "@switchboard/agent-smoke";
import { z } from "zod";
import { timestamp } from "./common.js";

/** A step of the report: its name and status are the smoke's own (@switchboard/agent-smoke). */
export const smokeStep = z
  .object({
    name: z.enum(smokeStepNames).describe("The step, named after what it drives"),
    status: z.enum(smokeStepStatuses).describe("pass, fail, or skipped (not configured here)"),
    duration_ms: z.number().int().min(0).describe("Wall time of the step; 0 when skipped"),
    detail: z
      .string()
      .optional()
      .describe(
        "What the step did, or why it failed or was skipped (safe to show: no hosts, no stacks)",
      )
      .meta({ examples: ["held and released +14155550123"] }),
  })
  .meta({ id: "SmokeStep" });

export const smokeRun = z
  .object({
    id: z
      .string()
      .regex(/^smk_[0-9a-z]{26}$/)
      .meta({ examples: ["smk_01jd2k8w7c3q9v0m5n6p7r8s9t"] })
      .describe("smk_<ULID>: this run"),
    status: z.enum(["pass", "fail"]).describe("fail when any step failed"),
    started_at: timestamp.describe("When the run started"),
    duration_ms: z.number().int().min(0).describe("Wall time of the whole run"),
    steps: z.array(smokeStep).describe("Every step, in order"),
  })
  .meta({ id: "SmokeRun" });
