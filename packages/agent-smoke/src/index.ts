export { createSmoke, type Smoke, type SmokeCaller, type SmokeRun } from "./smoke.js";
export type {
  RecordVerifier,
  RpcMethod,
  SmokeBackend,
  SmokeBackends,
  SmokeCallOptions,
  SmokePorts,
  SmokeSettings,
} from "./ports.js";
export {
  smokeStepNames,
  smokeStepStatuses,
  type SmokeStepName,
  type SmokeStepStatus,
} from "./step-names.js";
export { type StepResult } from "./step-runner.js";
export { smokeFactPublisher, type SmokeFactPublisher, type SmokeRunFact } from "./run-fact.js";
