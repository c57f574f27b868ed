import { loadCallControlSettings, startCallControl } from "@switchboard/call-control";
import { startInventory } from "@switchboard/inventory";
import { loadMessagingConfig, startMessaging } from "@switchboard/messaging";
import { startUsage, usageSigningKeySecret } from "@switchboard/usage";
import { loadWebhookSettings, startWebhook } from "@switchboard/webhook";
import type { ServiceComponent } from "./component.js";

/** Every backend service, in start order (a service may need the addresses of earlier ones). */
export const serviceComponents: ServiceComponent[] = [
  {
    name: "inventory",
    addressVariable: "INVENTORY_ADDR",
    start: ({ pool, bus, logger, host, port }) => startInventory({ pool, bus, port, host, logger }),
  },
  {
    name: "usage",
    addressVariable: "USAGE_ADDR",
    start: ({ pool, bus, logger, host, port, env }) =>
      startUsage({ pool, bus, port, host, logger, signingKeySecret: usageSigningKeySecret(env) }),
  },
  {
    name: "call-control",
    addressVariable: "CALL_CONTROL_ADDR",
    start: ({ pool, bus, logger, host, port, addresses, env }) =>
      startCallControl({
        pool,
        bus,
        port,
        host,
        logger,
        inventoryAddress: addresses.INVENTORY_ADDR ?? "127.0.0.1:50051",
        settings: loadCallControlSettings(env),
      }),
  },
  {
    name: "messaging",
    addressVariable: "MESSAGING_ADDR",
    start: ({ pool, bus, logger, host, port, addresses, env }) =>
      startMessaging({
        pool,
        bus,
        port,
        host,
        logger,
        inventoryAddress: addresses.INVENTORY_ADDR ?? "127.0.0.1:50051",
        config: loadMessagingConfig(env),
      }),
  },
  {
    name: "webhook",
    addressVariable: "WEBHOOK_ADDR",
    start: ({ pool, bus, logger, host, port, env }) =>
      startWebhook({ pool, bus, port, host, logger, settings: loadWebhookSettings(env) }),
  },
];
