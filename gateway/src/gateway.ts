import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createPool, type Logger, type Pool } from "@switchboard/kit";
import { createIdentity, ensureBootstrap, migrateGateway, type Identity } from "./auth/index.js";
import { connectBackends } from "./backends.js";
import type { GatewayConfig } from "./config.js";
import { createHealthReporter, type ExtraCheck } from "./health.js";
import { createHttpApp } from "./http/app.js";
import { authenticationStage } from "./http/authentication.js";
import type { Stage } from "./http/pipeline.js";
import { buildOpenApiDocument } from "./openapi/document.js";
import { createTrafficPolicies, type TrafficPolicies } from "./policies/traffic-policies.js";
import { metaRoutes } from "./routes/meta.js";
import { numberRoutes } from "./routes/numbers.js";
import type { RouteSpec } from "./routes/route-spec.js";

export const GATEWAY_VERSION = "0.1.0";

export interface RunningGateway {
  port: number;
  /** The loopback URL this process listens on. */
  url: string;
  /** PUBLIC_URL: what clients are told (issuer, links). */
  publicUrl: string;
  server: Server;
  pool: Pool;
  identity: Identity;
  routes: RouteSpec[];
  /** Rate limits and the Idempotency-Key store (counters for metrics, stores for tests). */
  policies: TrafficPolicies;
  stop(): Promise<void>;
}

/** Migrates the gateway schema, ensures the bootstrap client and serves HTTP. */
export async function startGateway(options: {
  config: GatewayConfig;
  logger: Logger;
  extraStages?: Stage[];
  extraChecks?: Record<string, ExtraCheck>;
}): Promise<RunningGateway> {
  const { config, logger } = options;
  const pool = createPool(config.databaseUrl, { name: "gateway", max: 10 });
  await migrateGateway(pool);
  const identity = createIdentity({
    pool,
    issuer: config.publicUrl,
    audience: config.tokenAudience,
    tokenTtlSeconds: config.tokenTtlSeconds,
    signingKeySecret: config.signingKeySecret,
    logger,
  });
  await identity.init();
  if (config.bootstrap) await ensureBootstrap(pool, config.bootstrap);
  const backends = connectBackends(config.backends);
  const policies = await createTrafficPolicies({
    config: config.policies,
    pool,
    databaseUrl: config.databaseUrl,
    logger,
    errorsUrl: config.errorsUrl,
  });
  const health = createHealthReporter({
    version: GATEWAY_VERSION,
    pool,
    backends,
    extraChecks: { ...policies.checks, ...options.extraChecks },
  });

  let openApi: unknown;
  const routes: RouteSpec[] = [
    ...metaRoutes({ identity, health, errorsUrl: config.errorsUrl, openApi: () => openApi }),
    ...numberRoutes(backends, config.grpcDeadlineMs),
  ];
  openApi = buildOpenApiDocument(routes, { publicUrl: config.publicUrl, version: GATEWAY_VERSION });

  const app = createHttpApp({
    routes,
    // Authentication, then the rate limit, then idempotency, then the operation.
    stages: [
      authenticationStage(identity.authenticator),
      ...policies.stages,
      ...(options.extraStages ?? []),
    ],
    errorHandlers: policies.errorHandlers,
    trustProxy: config.trustProxy,
    errorsUrl: config.errorsUrl,
    logger,
  });
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(config.port, config.host, () => resolve(listening));
  });
  server.keepAliveTimeout = 65_000;
  const port = (server.address() as AddressInfo).port;
  logger.info({ port }, "gateway listening");
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    publicUrl: config.publicUrl,
    server,
    pool,
    identity,
    routes,
    policies,
    stop: async () => {
      health.markShuttingDown();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      backends.close();
      await policies.close();
      await pool.end();
    },
  };
}
