export {
  createSmoke,
  type Smoke,
  type SmokeCaller,
  type SmokeDependencies,
  type SmokeRun,
  type SmokeSettings,
} from "./smoke.js";
export { smokeFactPublisher, type SmokeFactPublisher, type SmokeRunFact } from "./run-fact.js";
export { gatewaySmoke } from "./gateway-smoke.js";
