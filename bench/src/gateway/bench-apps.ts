import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { preparedStatementSupport, type Logger, type Pool } from "@switchboard/kit";
import { createIdentity, migrateGateway } from "@switchboard/gateway/auth";
import { createAccount, createClient } from "@switchboard/gateway/admin";
import { createHttpApp } from "@switchboard/gateway/http/app";
import { authenticationStage } from "@switchboard/gateway/http/authentication";
import type { Stage } from "@switchboard/gateway/http/pipeline";
import { ReplyCommitter, replyCommitMiddleware } from "@switchboard/gateway/records/index";
import { parseRateLimits } from "@switchboard/gateway/policies/rate-limit-config";
import {
  createTrafficPolicies,
  type TrafficPolicies,
} from "@switchboard/gateway/policies/traffic-policies";
import { created, ok } from "@switchboard/gateway/routes/replies";
import { defineRoute, type RouteSpec } from "@switchboard/gateway/http/route-spec";

/** Two authenticated routes that do no work of their own: all measured time is the gateway's. */
const benchRoutes: RouteSpec[] = [
  defineRoute({
    method: "post",
    path: "/bench/things",
    operationId: "benchCreate",
    summary: "bench",
    tag: "Bench",
    scope: "numbers:write",
    body: z.object({ value: z.string() }),
    success: { status: 201, description: "created" },
    problems: [],
    handler: async (ctx) =>
      created("/v1/bench/things/thg_1", { id: "thg_1", value: ctx.body.value }),
  }),
  defineRoute({
    method: "get",
    path: "/bench/things",
    operationId: "benchRead",
    summary: "bench",
    tag: "Bench",
    scope: "numbers:read",
    success: { status: 200, description: "ok" },
    problems: [],
    handler: async () => ok({ data: [] }),
  }),
];

export type Variant = "off" | "on" | "onAsync";

export interface BenchApps {
  /**
   * Base URLs. `off`: authentication only. `on`: authentication, then the rate limit (Redis) and
   * the Idempotency-Key store (PostgreSQL, synchronous commit), as the gateway wires them.
   * `onAsync`: the same with the store's commits not waiting for the WAL flush.
   */
  urls: Record<Variant, string>;
  /** Waits until the variant's writes after the reply (the stored response) are done. */
  settled: Record<Variant, () => Promise<void>>;
  token: string;
  close(): Promise<void>;
}

const listen = (
  stages: Stage[],
  policies: TrafficPolicies | undefined,
  logger: Logger,
  pool: Pool,
) =>
  new Promise<Server>((resolve) => {
    const errorsUrl = "http://bench.test/v1/errors";
    // As the gateway wires it: a kept answer is committed before its reply (records off here).
    const committer =
      policies &&
      new ReplyCommitter({ db: pool, store: policies.idempotencyStore, logger, budgetMs: 1_000 });
    const app = createHttpApp({
      routes: benchRoutes,
      first: committer
        ? [replyCommitMiddleware({ committer, records: undefined, errorsUrl, logger })]
        : [],
      stages,
      errorHandlers: policies?.errorHandlers ?? [],
      errorsUrl,
      logger,
    });
    const server = app.listen(0, "127.0.0.1", () => resolve(server));
  });

/** The same routes served twice on loopback: with the traffic policies and without. */
export async function startBenchApps(options: {
  pool: Pool;
  databaseUrl: string;
  redisUrl: string;
  logger: Logger;
}): Promise<BenchApps> {
  const { pool, logger } = options;
  await migrateGateway(pool);
  const namedStatements = await preparedStatementSupport(pool);
  const identity = createIdentity({
    pool,
    issuer: "http://bench.test",
    audience: "bench",
    signingKeySecret: "bench-signing-key-secret-0123456789",
  });
  await identity.init();
  const account = await createAccount(pool, { name: "bench" });
  const client = await createClient(pool, {
    accountId: account.id,
    scopes: ["numbers:read", "numbers:write"],
  });
  const issued = await identity.tokenEndpoint({
    contentType: "application/x-www-form-urlencoded",
    form: {
      grant_type: "client_credentials",
      client_id: client.clientId,
      client_secret: client.clientSecret,
    },
  });
  const token = (issued.body as { access_token: string }).access_token;

  const policies = (synchronousCommit: boolean) =>
    createTrafficPolicies({
      config: {
        redisUrl: options.redisUrl,
        redisKeyPrefix: `sbbench:${process.pid}:${synchronousCommit}:`,
        redisCommandTimeoutMs: 250,
        rateLimits: parseRateLimits("*=1000000/1000000"),
        idempotencyWaitMs: 10_000,
        idempotencyLeaseSeconds: 60,
        idempotencyPurgeIntervalSeconds: 0,
        idempotencySynchronousCommit: synchronousCommit,
      },
      pool,
      databaseUrl: options.databaseUrl,
      namedStatements,
      logger,
      errorsUrl: "http://bench.test/v1/errors",
      sealingSecret: "bench-sealing-secret",
    });
  const durable = await policies(true);
  const fast = await policies(false);
  const authentication = authenticationStage(identity.authenticator);
  const servers = {
    off: await listen([authentication], undefined, logger, pool),
    on: await listen([authentication, durable.stage], durable, logger, pool),
    onAsync: await listen([authentication, fast.stage], fast, logger, pool),
  };
  const url = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    urls: { off: url(servers.off), on: url(servers.on), onAsync: url(servers.onAsync) },
    settled: { off: async () => undefined, on: durable.settled, onAsync: fast.settled },
    token,
    close: async () => {
      for (const server of Object.values(servers)) {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
      await durable.close();
      await fast.close();
    },
  };
}
