export { migrateCallControl, migrationsDir } from "./migrations.js";
export { startCallControl, type CallControlOptions, type RunningCallControl } from "./server.js";
export { loadCallControlSettings, type CallControlSettings } from "./config.js";
export { createCallControlService, type CallControlServiceOptions } from "./service.js";
export type { CarrierAdapter, CarrierEvent, DialRequest } from "./calls/carrier.js";
export { sandboxScript } from "./carrier/sandbox/sandbox-script.js";
export { callControlComponent } from "./component.js";
