/**
 * The preload: `node --import @switchboard/kit/telemetry/register <entry>`. It must run before
 * the entry's imports are loaded: the ESM loader hook (import-in-the-middle, limited to the
 * instrumented packages) lets the pg and ioredis instrumentations patch modules that ESM code
 * imports. Configuration: the standard OTEL_* variables only (telemetry/env.ts). With
 * OTEL_SDK_DISABLED=true nothing is loaded at all.
 */
import { register } from "node:module";
import { telemetryDisabled } from "./env.js";

if (!telemetryDisabled()) {
  register("@opentelemetry/instrumentation/hook.mjs", import.meta.url, {
    data: { include: ["pg", "pg-pool", "ioredis"] },
  });
  const { startTelemetry } = await import("./sdk.js");
  startTelemetry();
}
