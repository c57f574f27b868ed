import { defineComponent, runningComponent } from "@switchboard/kit";
import { webhookEnvSchema } from "./config.js";
import { startWebhook } from "./server.js";

/** Subscriptions and signed deliveries. */
export const webhookComponent = defineComponent({
  name: "webhook",
  grpcPort: 50055,
  adminPort: 9095,
  needs: [],
  poolSize: 20,
  settings: webhookEnvSchema,
  // Every replica listens on the same sink port: a delivery to the sink reaches the loopback
  // of whichever replica runs it.
  ownProcessDefaults: { WEBHOOK_SINK_PORT: "50056" },
  start: async ({ addresses: _addresses, ownProcess: _ownProcess, ...deps }, settings) =>
    runningComponent(await startWebhook({ ...deps, settings })),
});
