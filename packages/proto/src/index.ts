// Generated gRPC contracts (buf generate + ts-proto). Do not edit the files under gen/.
export * as inventory from "./gen/switchboard/inventory/v1/inventory.js";
export * as usage from "./gen/switchboard/usage/v1/usage.js";
export * as messaging from "./gen/switchboard/messaging/v1/messaging.js";
export * as webhook from "./gen/switchboard/webhook/v1/webhook.js";
export * as callcontrol from "./gen/switchboard/callcontrol/v1/callcontrol.js";
// The standard gRPC error model (google.rpc.Status and its details), vendored under protos/google.
export * as rpcStatus from "./gen/google/rpc/status.js";
export * as rpcErrorDetails from "./gen/google/rpc/error_details.js";
export { stirShakenCertificatePath } from "./stir-shaken.js";
export { wireEnum, type WireEnum } from "./wire-enum.js";
export * as wire from "./wire.js";
export { outboundCallLimits } from "./call-limits.js";
