export { banner } from "./banner.js";
export { startPlatform, type PlatformOptions, type RunningPlatform } from "./compose.js";
export { serviceComponents } from "./components.js";
export { configurationTables, withConfigurationTables } from "./configuration-reference.js";
