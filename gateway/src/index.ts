export { gatewaySettings, loadGatewayConfig, type GatewayConfig } from "./config.js";
export { startGateway, GATEWAY_VERSION, type RunningGateway } from "./gateway.js";
export { runAdminCli } from "./admin/cli.js";
export { gatewayComponent } from "./component.js";
export { backendNames } from "./backends.js";
