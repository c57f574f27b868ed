import { defineComponent, runningComponent } from "@switchboard/kit";
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
  start: async ({ addresses, ownProcess: _ownProcess, ...deps }, config) =>
    runningComponent(
      await startMessaging({ ...deps, inventoryAddress: addresses.inventory!, config }),
    ),
});
