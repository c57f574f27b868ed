/** The API-only part of telemetry (no SDK): safe to import anywhere. The SDK is ./register. */
export { traceExportRequested, telemetryDisabled } from "./env.js";
export { otelTracePropagator } from "./event-propagator.js";
export { traceClientInterceptor, traceUnaryCall } from "./grpc-spans.js";
export {
  traceHttpClient,
  traceHttpServer,
  type HttpClientOutcome,
  type HttpClientTarget,
  type HttpServerSpanOptions,
} from "./http-spans.js";
export { traceLogFields } from "./log-fields.js";
export { errorType } from "./spans.js";
export { flushTelemetry } from "./flush.js";
