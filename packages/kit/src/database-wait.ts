import pg from "pg";
import type { Logger } from "pino";
import { z } from "zod";
import { loadConfig } from "./config.js";

/** STARTUP_WAIT_MS: how long a process waits for PostgreSQL at start before it gives up. */
export const startupWaitSettings = z.object({
  STARTUP_WAIT_MS: z.coerce
    .number()
    .int()
    .min(0)
    .max(3_600_000)
    .default(120_000)
    .describe(
      "how long a process retries an unreachable PostgreSQL at start before it exits 1 (the chart sets its startup probe's budget)",
    ),
});

/** Where a PostgreSQL URL points, without its credentials: `host:port/database`. */
export function databaseTarget(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname || "localhost"}:${parsed.port || "5432"}${parsed.pathname || "/"}`;
  } catch {
    return "an unparsable DATABASE_URL";
  }
}

/** The error's code and first line only: never a stack, a URL or a password. */
const reasonOf = (error: unknown): { code?: string; reason: string } => {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return {
    ...(typeof code === "string" ? { code } : {}),
    reason: String(message ?? error).split("\n")[0]!,
  };
};

async function answers(url: string, timeoutMs: number): Promise<void> {
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: timeoutMs,
    application_name: "switchboard-startup",
  });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.query("SELECT 1");
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Waits at start until PostgreSQL answers, retrying with backoff (0.5 s doubling to 5 s) for up
 * to `budgetMs`, one log line per failed attempt naming the target; resolves false when the
 * budget is spent (the caller exits non-zero) instead of crashing with a stack trace.
 */
export async function waitForDatabase(
  url: string,
  options: { logger: Logger; budgetMs: number; maxDelayMs?: number },
): Promise<boolean> {
  const target = databaseTarget(url);
  const started = Date.now();
  let delayMs = 500;
  for (let attempt = 1; ; attempt++) {
    try {
      await answers(url, Math.min(5_000, Math.max(1_000, options.budgetMs)));
      if (attempt > 1)
        options.logger.info({ dependency: "postgres", target }, "PostgreSQL answers");
      return true;
    } catch (error) {
      const waitedMs = Date.now() - started;
      const left = options.budgetMs - waitedMs;
      const fields = { dependency: "postgres", target, attempt, waitedMs, ...reasonOf(error) };
      if (left <= 0) {
        options.logger.fatal(fields, "PostgreSQL unreachable at start: giving up");
        return false;
      }
      options.logger.warn(fields, "PostgreSQL unreachable at start: retrying");
      await new Promise((resolve) => setTimeout(resolve, Math.min(delayMs, left)));
      delayMs = Math.min(delayMs * 2, options.maxDelayMs ?? 5_000);
    }
  }
}

/**
 * A process's first step after its admin port: wait for PostgreSQL within STARTUP_WAIT_MS, or
 * exit 1 after one final log line (Kubernetes restarts it with backoff).
 */
export async function requireDatabaseAtStart(
  url: string,
  logger: Logger,
  source: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const { STARTUP_WAIT_MS } = loadConfig(startupWaitSettings, source);
  if (await waitForDatabase(url, { logger, budgetMs: STARTUP_WAIT_MS })) return;
  process.exit(1);
}
