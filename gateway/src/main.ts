import {
  createLogger,
  onShutdown,
  requireDatabaseAtStart,
  startComponentAdmin,
} from "@switchboard/kit";
import { gatewayComponent } from "./component.js";
import { loadGatewayConfig } from "./config.js";
import { startGateway } from "./gateway.js";

const logger = createLogger("gateway");
const admin = await startComponentAdmin({
  component: gatewayComponent.name,
  defaultPort: gatewayComponent.adminPort,
  logger,
});
const config = loadGatewayConfig();
await requireDatabaseAtStart(config.databaseUrl, logger);
const gateway = await startGateway({ config, logger });
admin.setReady(() => gateway.readiness());
onShutdown(logger, async () => {
  admin.markShuttingDown();
  await gateway.stop();
});
