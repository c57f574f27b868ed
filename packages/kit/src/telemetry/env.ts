import { basename, dirname, sep } from "node:path";

/**
 * Which telemetry a process runs, read only from the standard OpenTelemetry variables.
 * `OTEL_SDK_DISABLED=true` starts nothing. Export happens only when asked for:
 * `OTEL_TRACES_EXPORTER` (other than `none`) or an OTLP endpoint variable; otherwise the SDK
 * still makes trace ids and propagates context (logs carry `trace_id`) but records nothing.
 */
const truthy = (value: string | undefined) => value?.trim().toLowerCase() === "true";

export function telemetryDisabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return truthy(env.OTEL_SDK_DISABLED);
}

export function traceExportRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  const exporters = (env.OTEL_TRACES_EXPORTER ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "" && name !== "none");
  return (
    exporters.length > 0 ||
    Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()) ||
    Boolean(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim())
  );
}

/** True when `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` names the service. */
export function serviceNameConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  return (
    Boolean(env.OTEL_SERVICE_NAME?.trim()) ||
    /(^|,)\s*service\.name\s*=/.test(env.OTEL_RESOURCE_ATTRIBUTES ?? "")
  );
}

/**
 * A service name from the entry path: `services/call-control/dist/main.js` → `call-control`,
 * `services/webhook/dist/worker-main.js` → `webhook-worker`, `gateway/dist/main.js` →
 * `gateway`, `platform/dist/embedded.js` → `switchboard`.
 */
export function serviceNameFromEntry(entry: string | undefined): string {
  if (!entry) return "switchboard";
  const parts = dirname(entry).split(sep);
  const component = parts[parts.length - 1] === "dist" ? parts[parts.length - 2] : undefined;
  if (!component || component === "platform") return "switchboard";
  const file = basename(entry).replace(/\.[cm]?js$/, "");
  return file === "main" ? component : `${component}-${file.replace(/-?main$/, "")}`;
}
