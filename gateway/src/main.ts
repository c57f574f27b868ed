import { closeHttpServer, createLogger, onShutdown, startComponentAdmin } from "@switchboard/kit";
import { loadGatewayConfig } from "./config.js";
import { startGateway } from "./gateway.js";

const logger = createLogger("gateway");
const admin = await startComponentAdmin({ component: "gateway", defaultPort: 9090, logger });
const gateway = await startGateway({ config: loadGatewayConfig(), logger });
admin.setReady(() => gateway.readiness());
// Health answers 503 first; requests in flight finish; keep-alive connections close when idle.
onShutdown(logger, async () => {
  admin.markShuttingDown();
  const closed = closeHttpServer(gateway.server);
  await gateway.stop();
  await closed;
});
