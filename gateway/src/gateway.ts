import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  drainableHttpServer,
  createEventBus,
  createPool,
  preparedStatementSupport,
  type EventBus,
  type Logger,
  type Pool,
  type ReadinessReport,
} from "@switchboard/kit";
import { createIdentity, migrateGateway, type Identity } from "./auth/index.js";
import { ensureBootstrap } from "./admin/index.js";
import { requestRpc } from "./backend-rpc.js";
import { connectBackends } from "./backends.js";
import { answerClientErrors } from "./http/client-errors.js";
import { docsPage } from "./http/docs-page.js";
import type { GatewayConfig } from "./config.js";
import { createHealthReporter, type ExtraCheck } from "./health.js";
import { createHttpApp } from "./http/app.js";
import { corsPolicy } from "./http/cors.js";
import { authenticationStage } from "./http/authentication.js";
import type { Stage } from "./http/pipeline.js";
import { buildOpenApiDocument } from "./openapi/document.js";
import { createTrafficPolicies, type TrafficPolicies } from "./policies/traffic-policies.js";
import { adminRoutes } from "./routes/admin.js";
import { callResourceRoutes } from "./routes/call-resources.js";
import { callRoutes } from "./routes/calls.js";
import { metaRoutes } from "./routes/meta.js";
import { numberRoutes } from "./routes/numbers.js";
import { webhookRoutes } from "./routes/webhooks.js";
import { usageRoutes } from "./routes/usage.js";
import { messagingKeySource } from "./routes/message-keys.js";
import { messageRoutes } from "./routes/messages.js";
import { agentRoutes } from "./routes/agent.js";
import { gatewaySmoke } from "./smoke/gateway-smoke.js";
import { createRecordPath, usageKeySource, type RecordPath } from "./records/index.js";
import { appendRecordsTo } from "./records/usage-append.js";
import type { RouteSpec } from "./http/route-spec.js";

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
  /** The reply commit (records, kept answers) and the record relay to usage. */
  records: RecordPath;
  /** The admin port's /readyz: PostgreSQL and every backend (Redis only warns: it fails open). */
  readiness(): Promise<ReadinessReport>;
  stop(): Promise<void>;
}

/** Migrates the gateway schema, ensures the bootstrap client and serves HTTP. */
export async function startGateway(options: {
  config: GatewayConfig;
  logger: Logger;
  extraStages?: Stage[];
  extraChecks?: Record<string, ExtraCheck>;
  /** The platform's shared queue (embedded mode, tests); else one on REDIS_URL is opened. */
  bus?: EventBus;
}): Promise<RunningGateway> {
  const { config, logger } = options;
  const pool = createPool(config.databaseUrl, {
    name: "gateway",
    max: 10,
    statementTimeoutMs: config.statementTimeoutMs,
  });
  await migrateGateway(pool);
  const namedStatements = await preparedStatementSupport(pool);
  const identity = createIdentity({
    pool,
    issuer: config.publicUrl,
    audience: config.tokenAudience,
    tokenTtlSeconds: config.tokenTtlSeconds,
    signingKeySecret: config.signingKeySecret,
    logger,
  });
  await identity.init();
  identity.watchClients();
  if (config.bootstrap) await ensureBootstrap(pool, config.bootstrap);
  const backends = connectBackends(config.backends);
  const policies = await createTrafficPolicies({
    config: config.policies,
    pool,
    databaseUrl: config.databaseUrl,
    statementTimeoutMs: config.statementTimeoutMs,
    namedStatements,
    logger,
    errorsUrl: config.errorsUrl,
    sealingSecret: config.signingKeySecret,
  });
  if (!config.usageRecords.enabled) {
    if (config.nodeEnv === "production") {
      throw new Error("USAGE_RECORDS cannot be turned off in production");
    }
    logger.warn("usage records are off (USAGE_RECORDS=false): replies land no api.request record");
  }
  const records = createRecordPath({
    db: pool,
    store: policies.idempotencyStore,
    append: appendRecordsTo(backends.usage, config.grpcDeadlineMs),
    logger,
    errorsUrl: config.errorsUrl,
    records: config.usageRecords.enabled
      ? { platformAccount: config.usageRecords.platformAccount }
      : undefined,
    commitBudgetMs: config.usageRecords.timeoutMs,
  });
  // The smoke.run fact goes to the usage ledger over the platform's event queue.
  const ownBus =
    options.bus === undefined && config.policies.redisUrl
      ? createEventBus({
          redisUrl: config.policies.redisUrl,
          logger,
          prefix: config.usageRecords.queuePrefix,
        })
      : undefined;
  const smokeBus = options.bus ?? ownBus;
  const health = createHealthReporter({
    version: GATEWAY_VERSION,
    pool,
    backends,
    extraChecks: { ...policies.checks, ...options.extraChecks },
  });

  // The document describes the route table it is served from, so it is built after it.
  const openApi: { document?: unknown } = {};
  const routes: RouteSpec[] = [
    ...metaRoutes({
      identity,
      health,
      errorsUrl: config.errorsUrl,
      openApi: () => openApi.document,
      keySources: [
        usageKeySource(backends.usage, {
          deadlineMs: Math.min(config.grpcDeadlineMs, 2_000),
          logger,
        }),
        messagingKeySource(backends.messaging, {
          deadlineMs: Math.min(config.grpcDeadlineMs, 2_000),
          logger,
        }),
      ],
    }),
    ...adminRoutes({ pool, keys: identity.keys, platformAccount: config.adminAccount }),
    ...numberRoutes,
    ...webhookRoutes,
    ...usageRoutes,
    ...messageRoutes,
    ...callResourceRoutes,
    ...callRoutes({ sandbox: config.carriers.voice === "sandbox" }),
    ...agentRoutes(
      gatewaySmoke({ config, backends, pool, checks: policies.checks, bus: smokeBus, logger }),
    ),
  ];
  openApi.document = buildOpenApiDocument(routes, {
    publicUrl: config.publicUrl,
    version: GATEWAY_VERSION,
    errorsUrl: config.errorsUrl,
  });

  const app = createHttpApp({
    routes,
    rpc: requestRpc(backends, config.grpcDeadlineMs),
    first: [records.middleware],
    // The record stage, authentication, then the rate limit and idempotency as one stage (the
    // bucket decides first; its round trip overlaps the key's claim), then the operation.
    stages: [
      records.stage,
      authenticationStage(identity.authenticator),
      policies.stage,
      ...(options.extraStages ?? []),
    ],
    errorHandlers: policies.errorHandlers,
    pages: [docsPage({ title: "Switchboard API reference", before: [policies.pageLimit] })],
    trustProxy: config.trustProxy,
    cors: corsPolicy(config.corsOrigins),
    errorsUrl: config.errorsUrl,
    logger,
  });
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(config.port, config.host, () => resolve(listening));
  });
  server.keepAliveTimeout = 65_000;
  answerClientErrors(server, config.errorsUrl);
  const drainable = drainableHttpServer(server);
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
    records,
    readiness: () => health.readiness(),
    // Every mode stops the same way: health answers 503 first, requests in flight finish, and
    // keep-alive connections close as soon as they are idle (`Connection: close` on anything
    // that still arrives).
    stop: async () => {
      health.markShuttingDown();
      policies.stopWaiting();
      await drainable.close();
      await records.close();
      await ownBus?.close();
      backends.close();
      await policies.close();
      await identity.close();
      await pool.end();
    },
  };
}
