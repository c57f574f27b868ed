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
 * Makes an HTTP server drainable: `close()` stops taking connections, lets requests in flight
 * finish, and closes keep-alive connections as soon as they are idle. Every reply not yet sent
 * when it is called, in flight or arriving later on an open connection, carries
 * `Connection: close`. Node's `server.close()` alone waits for idle keep-alive sockets to time
 * out. Call it where the server is created, so requests in flight are known.
 */
export function drainableHttpServer(server: Server): { close(): Promise<void> } {
  const unsent = new Set<ServerResponse>();
  let closing = false;
  server.prependListener("request", (_request, response: ServerResponse) => {
    if (closing) {
      response.setHeader("Connection", "close");
      return;
    }
    unsent.add(response);
    const forget = () => unsent.delete(response);
    response.once("finish", forget);
    response.once("close", forget);
  });
  return {
    close: () => {
      closing = true;
      for (const response of unsent) {
        if (!response.headersSent) response.setHeader("Connection", "close");
      }
      unsent.clear();
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      return new Promise<void>((resolve) => {
        server.close(() => {
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}
