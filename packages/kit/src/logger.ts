import { join } from "node:path";
import { pino, type DestinationStream, type Logger, type LoggerOptions } from "pino";
import { z } from "zod";
import { loadConfig } from "./config.js";
import { traceLogFields } from "./telemetry/log-fields.js";

/** Paths whose values never reach a log line (docs/architecture.md rule 7). */
export const redactedPaths = [
  "authorization",
  "*.authorization",
  "headers.authorization",
  "req.headers.authorization",
  "req.headers.cookie",
  "password",
  "*.password",
  "secret",
  "*.secret",
  "client_secret",
  "*.client_secret",
  "token",
  "*.token",
  "access_token",
  "*.access_token",
  "privateKey",
  "*.privateKey",
  "private_key",
  "*.private_key",
  "body",
  "*.body",
  // Webhook secrets (whsec_…), client secrets, service tokens (sbt_…), cookies, message content.
  "secrets",
  "*.secrets",
  "clientSecret",
  "*.clientSecret",
  "accessToken",
  "*.accessToken",
  "refresh_token",
  "*.refresh_token",
  "cookie",
  "*.cookie",
  "variables",
  "*.variables",
  "text",
  "*.text",
  // A seat's SIP password as call-control's messages carry it (sbsip_…).
  "sipPassword",
  "*.sipPassword",
];

export type { Logger };

let captureFile: DestinationStream | undefined;

/**
 * LOG_CAPTURE_DIR (set by the test run's global setup): every line of this process goes to
 * `<dir>/<pid>.ndjson`, so the run can scan them all for secrets when it ends.
 */
function capturedDestination(): DestinationStream | undefined {
  const directory = process.env.LOG_CAPTURE_DIR;
  if (!directory) return undefined;
  captureFile ??= pino.destination({
    dest: join(directory, `${process.pid}.ndjson`),
    append: true,
    mkdir: true,
    sync: true,
  });
  return captureFile;
}

/** LOG_LEVEL, the one setting every logger reads. */
export const logSettings = z.object({
  LOG_LEVEL: z
    .enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"])
    .optional()
    .describe("pino level (default `info`; in tests `silent`, `debug` while the log capture runs)"),
});

const defaultLevel = (): string =>
  loadConfig(logSettings).LOG_LEVEL ??
  (process.env.NODE_ENV !== "test" ? "info" : process.env.LOG_CAPTURE_DIR ? "debug" : "silent");

/** A JSON logger with the redaction above and the active trace on every line. */
export function createLogger(
  name: string,
  options: LoggerOptions = {},
  destination: DestinationStream | undefined = capturedDestination(),
): Logger {
  const settings: LoggerOptions = {
    name,
    level: defaultLevel(),
    redact: { paths: redactedPaths, censor: "[redacted]" },
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    mixin: traceLogFields,
    ...options,
  };
  return destination ? pino(settings, destination) : pino(settings);
}
