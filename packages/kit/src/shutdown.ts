import type { Server, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { z } from "zod";
import { loadConfig } from "./config.js";
import { flushTelemetry } from "./telemetry/flush.js";

/**
 * SHUTDOWN_GRACE_MS: how long a process may drain after SIGTERM before it is forced out
 * (default 25 s, inside Kubernetes' default 30 s termination grace).
 */
export function shutdownGraceMs(
  source: NodeJS.ProcessEnv = process.env,
  fallback = 25_000,
): number {
  const schema = z.object({
    SHUTDOWN_GRACE_MS: z.coerce.number().int().min(100).max(3_600_000).default(fallback),
  });
  return loadConfig(schema, source).SHUTDOWN_GRACE_MS;
}

/**
 * Runs `stop` once on SIGTERM or SIGINT, then exits. A second signal, or `stop` outlasting
 * `graceMs`, exits at once with status 1.
 */
export function onShutdown(
  logger: Logger,
  stop: () => Promise<void>,
  graceMs = shutdownGraceMs(),
): void {
  let stopping = false;
  const handle = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    const started = Date.now();
    logger.info({ signal, graceMs }, "shutting down");
    const timer = setTimeout(() => {
      logger.error("shutdown grace period exceeded; exiting");
      process.exit(1);
    }, graceMs);
    timer.unref();
    stop().then(
      async () => {
        logger.info({ ms: Date.now() - started }, "drained; exiting");
        await flushTelemetry();
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, "error while shutting down");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", handle);
  process.on("SIGINT", handle);
}

/**
 * Closes an HTTP server the way a drain needs: no new connections, requests in flight finish,
 * and keep-alive connections close as soon as they are idle (whatever still arrives on them is
 * answered with `Connection: close`). Node's `server.close()` alone waits for idle keep-alive
 * sockets to time out. Resolves once every connection is gone.
 */
export function closeHttpServer(server: Server): Promise<void> {
  server.prependListener("request", (_request, response: ServerResponse) => {
    if (!response.headersSent) response.setHeader("Connection", "close");
  });
  const sweep = setInterval(() => server.closeIdleConnections(), 50);
  return new Promise<void>((resolve) => {
    server.close(() => {
      clearInterval(sweep);
      resolve();
    });
    server.closeIdleConnections();
  });
}
