export { metricsRegistry, latencyBuckets } from "./registry.js";
export { observeHttpRequest, UNMATCHED_ROUTE } from "./http.js";
export {
  grpcCodeName,
  grpcMethodLabels,
  meteredCallback,
  startGrpcClientTimer,
  startGrpcServerTimer,
} from "./grpc.js";
export { countJobOutcome, trackQueueDepth, type JobOutcome, type QueueDepth } from "./queues.js";
export {
  initWebhookDeliveryMetrics,
  observeWebhookDelivery,
  type WebhookDeliveryOutcome,
} from "./webhooks.js";
export { countRateLimitRejection, countRateLimitStoreError } from "./rate-limits.js";
export { trackPool } from "./pools.js";
export { recordBuildInfo, switchboardVersion } from "./build-info.js";
export { trackRecordBacklog } from "./records.js";
export { countMessageStatus, countSipResponse, trackLiveCalls } from "./domain.js";
export {
  countSipTrunkFailover,
  trackSipTrunkHealth,
  type SipTrunkAddressState,
} from "./sip-trunks.js";
