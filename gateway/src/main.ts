import { createLogger, onShutdown } from "@switchboard/kit";
import { loadGatewayConfig } from "./config.js";
import { startGateway } from "./gateway.js";

const logger = createLogger("gateway");
const gateway = await startGateway({ config: loadGatewayConfig(), logger });
onShutdown(logger, () => gateway.stop());
