import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { ReadinessReport } from "./health-watch.js";
import { metricsRegistry, withTimeout } from "./metrics/registry.js";

export interface AdminServerOptions {
  /** Default `127.0.0.1`. The port is internal: no authentication; never expose it publicly. */
  host?: string;
  /** 0 picks a free port. */
  port: number;
  /**
   * When `port` is taken: `fail` (default) rejects; `any` warns and listens on a free port
   * instead (the embedded mode, whose default 9090 is also Prometheus's).
   */
  whenTaken?: "fail" | "any";
  logger: Logger;
  /**
   * Readiness: `fail` answers 503; `pass` and `warn` answer 200. Until it is given (here or
   * with `setReady` once the component has started), /readyz answers 503 `starting`.
   */
  ready?: () => Promise<ReadinessReport>;
  /** Liveness beyond "the event loop answers" (default: always live). */
  live?: () => boolean;
  /** How long /readyz waits for `ready` before answering 503 (default 3 s). */
  readyTimeoutMs?: number;
}

export interface RunningAdminServer {
  port: number;
  /** The loopback URL of this server. */
  url: string;
  /** The component has started: /readyz asks `ready` from now on. */
  setReady(ready: () => Promise<ReadinessReport>): void;
  /** From now on /readyz answers 503 (SIGTERM: stop routing here before draining). */
  markShuttingDown(): void;
  close(): Promise<void>;
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "Content-Type": "application/json", "Cache-Control": "no-store" });
  res.end(JSON.stringify(body));
};

/**
 * The admin HTTP port of every process: `GET /metrics` (Prometheus text), `GET /livez` and
 * `GET /readyz` (`{status, checks}`). Plain node:http, apart from the public API.
 */
export async function startAdminServer(options: AdminServerOptions): Promise<RunningAdminServer> {
  let shuttingDown = false;
  let ready = options.ready;
  const readiness = async (): Promise<{ code: number; body: ReadinessReport }> => {
    if (shuttingDown) return { code: 503, body: { status: "fail", checks: { shutdown: "fail" } } };
    if (!ready) return { code: 503, body: { status: "fail", checks: { starting: "fail" } } };
    const report = await withTimeout(ready(), options.readyTimeoutMs ?? 3_000);
    if (!report) return { code: 503, body: { status: "fail", checks: { timeout: "fail" } } };
    return { code: report.status === "fail" ? 503 : 200, body: report };
  };

  const routes: Record<string, (res: ServerResponse) => Promise<void>> = {
    "/metrics": async (res) => {
      const text = await metricsRegistry.metrics();
      res.writeHead(200, { "Content-Type": metricsRegistry.contentType });
      res.end(text);
    },
    "/livez": async (res) => {
      const live = options.live?.() ?? true;
      json(res, live ? 200 : 503, { status: live ? "pass" : "fail" });
    },
    "/readyz": async (res) => {
      const { code, body } = await readiness();
      json(res, code, body);
    },
  };

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? "/", "http://admin").pathname;
    const route = routes[path];
    if (!route) return json(res, 404, { status: 404, title: "Not Found" });
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.setHeader("Allow", "GET, HEAD");
      return json(res, 405, { status: 405, title: "Method Not Allowed" });
    }
    route(res).catch((error: unknown) => {
      options.logger.error({ err: error, path }, "admin endpoint failed");
      if (!res.headersSent) json(res, 500, { status: 500, title: "Internal Server Error" });
      else res.end();
    });
  };

  const server = createServer(handle);
  server.keepAliveTimeout = 65_000;
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, options.host ?? "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  try {
    await listen(options.port);
  } catch (error) {
    if (options.whenTaken !== "any" || (error as NodeJS.ErrnoException).code !== "EADDRINUSE") {
      throw error;
    }
    options.logger.warn(
      { port: options.port },
      "the admin port is taken; the admin server listens on a free port instead",
    );
    await listen(0);
  }
  const port = (server.address() as AddressInfo).port;
  options.logger.info({ port }, "admin server listening (/metrics, /livez, /readyz)");
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    setReady: (next) => {
      ready = next;
    },
    markShuttingDown: () => {
      shuttingDown = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
