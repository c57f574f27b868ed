import { defineComponent } from "@switchboard/kit";
import { messagingSettings } from "./config.js";
import { startMessaging } from "./server.js";

/** Messages, templates, consents and sender numbers. */
export const messagingComponent = defineComponent({
  name: "messaging",
  grpcPort: 50053,
  adminPort: 9093,
  needs: ["inventory"],
  poolSize: 10,
  settings: messagingSettings,
  start: async ({ pool, bus, logger, host, port, addresses }, config) => {
    const messaging = await startMessaging({
      pool,
      bus,
      host,
      port,
      logger,
      inventoryAddress: addresses.inventory!,
      config,
    });
    return {
      port: messaging.port,
      instance: messaging,
      readiness: () => messaging.health.check(),
      stop: () => messaging.stop(),
    };
  },
});
