export { loadGatewayConfig, signingKeySecretFrom, type GatewayConfig } from "./config.js";
export { startGateway, GATEWAY_VERSION, type RunningGateway } from "./gateway.js";
export { runAdminCli } from "./admin/cli.js";
