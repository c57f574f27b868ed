export { migrateWebhook, migrationsDir } from "./migrations.js";
export {
  defaultRetrySchedule,
  loadWebhookSettings,
  webhookEnvSchema,
  type WebhookSettings,
} from "./config.js";
export {
  createWebhookContext,
  startDeliveryWorkers,
  startWebhook,
  type RunningWebhook,
  type WebhookOptions,
} from "./server.js";
export { createWebhookService } from "./service.js";
export { deliveryQueue, type DeliveryJob } from "./dispatch.js";
export { fanOut, fanOutGroup } from "./fan-out.js";
export { webhookEventTypes, isDeliverableType } from "./event-catalog.js";
export { signedHeaders, verifySignature, newSigningSecret, secretKey } from "./signature.js";
export { checkWebhookUrl, UnsafeUrlError, type Resolver } from "./url-guard.js";
export type { WebhookContext } from "./context.js";
export { webhookComponent } from "./component.js";
