export { banner } from "./banner.js";
export { startPlatform, type PlatformOptions, type RunningPlatform } from "./compose.js";
export type { ServiceComponent, ComponentDeps, RunningComponent } from "./component.js";
