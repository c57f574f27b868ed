export { migrateMessaging, migrationsDir } from "./migrations.js";
export { startMessaging, type MessagingOptions, type RunningMessaging } from "./server.js";
export { loadMessagingConfig, type MessagingConfig } from "./config.js";
export { createMessagingService } from "./service.js";
export {
  segmentText,
  messageSegments,
  segmentLimits,
  type Encoding,
  type SegmentInfo,
} from "./encoding/segments.js";
export { isGsm7, gsm7Septets, gsm7ExtensionCharacters } from "./encoding/gsm7.js";
export { parseTemplateBody, renderTemplate } from "./templates/variables.js";
export {
  canonicalContent,
  sha256Hex,
  TEMPLATE_KEY_PURPOSE,
  TemplateSigner,
} from "./templates/signature.js";
export { recognizeKeyword, type Keyword, type KeywordAction } from "./consents/keywords.js";
export { sandboxBehaviour, type SandboxBehaviour } from "./carrier/sandbox-outcomes.js";
export {
  CarrierError,
  type MessagingCarrier,
  type SubmitRequest,
  type DeliveryReceipt,
} from "./carrier/carrier.js";
export { SUBMIT_QUEUE } from "./delivery/submit-queue.js";
export { sweepMessages } from "./delivery/sweeper.js";
export { messagingComponent } from "./component.js";
