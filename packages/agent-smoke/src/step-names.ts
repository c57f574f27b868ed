/** The agent smoke's steps, in the order its report lists them (stable names). */
export const smokeStepNames = [
  "gateway",
  "numbers.search",
  "numbers.hold",
  "numbers.release",
  "resources",
  "calls.outbound",
  "calls.inbound",
  "messages.send",
  "webhooks.delivery",
  "usage.records",
  "cleanup",
] as const;
export type SmokeStepName = (typeof smokeStepNames)[number];

export const smokeStepStatuses = ["pass", "fail", "skipped"] as const;
export type SmokeStepStatus = (typeof smokeStepStatuses)[number];
