import { pino, type Logger, type LoggerOptions } from "pino";

/** Paths whose values never reach a log line (ARCHITECTURE rule 7). */
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
];

export type { Logger };

export function createLogger(name: string, options: LoggerOptions = {}): Logger {
  return pino({
    name,
    level: process.env.LOG_LEVEL ?? (process.env.NODE_ENV === "test" ? "silent" : "info"),
    redact: { paths: redactedPaths, censor: "[redacted]" },
    base: { service: name },
    timestamp: pino.stdTimeFunctions.isoTime,
    ...options,
  });
}
