import { randomBytes } from "node:crypto";
import {
  callUnary,
  createBullmqBus,
  createClient,
  createLogger,
  createMemoryBus,
  createPool,
  eventQueueNames,
  newId,
  type EventBus,
  type Pool,
} from "@switchboard/kit";
import type { testDatabaseKinds } from "@switchboard/kit/testing";
import { usage } from "@switchboard/proto";
import { startUsage, type RunningUsage } from "../src/index.js";
import { failure, type UnaryMethod } from "@switchboard/test-support/grpc";

export type DatabaseKind = (typeof testDatabaseKinds)[number];

export const testRedisUrl = (): string => process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** A real usage service (gRPC + consumers) on a fresh database and its own queue namespace. */
export interface UsageHarness {
  pool: Pool;
  bus: EventBus;
  running: RunningUsage;
  client: usage.UsageServiceClient;
  call<Req, Res>(method: UnaryMethod<Req, Res>, request: Req): Promise<Res>;
  /** Appends records as the gateway's relay does (AppendRequestRecords). */
  publishRequests(records: usage.RequestRecord[], _label?: string): Promise<void>;
  /** Waits until `count` records match the SQL condition (on usage.records r). */
  waitForCount(
    condition: string,
    values: unknown[],
    count: number,
    timeoutMs?: number,
  ): Promise<void>;
  count(condition: string, values?: unknown[]): Promise<number>;
  /** Stops the service (not the bus or database): for restart tests. */
  stopService(): Promise<void>;
  restartService(): Promise<void>;
  stop(): Promise<void>;
}

export const signingSecret = "usage-test-signing-key-secret-0123456789";

export async function startUsageHarness(
  kind: DatabaseKind,
  options: { bus?: "memory" | "bullmq" } = {},
): Promise<UsageHarness> {
  const database = await kind.create("usage");
  const pool = createPool(database.url, { max: 10, name: "usage-test" });
  const logger = createLogger("usage-test", { level: process.env.TEST_LOG_LEVEL ?? "silent" });
  const prefix = `sbtest_${randomBytes(4).toString("hex")}`;
  const bus =
    options.bus === "bullmq"
      ? createBullmqBus({ redisUrl: testRedisUrl(), prefix, stalledIntervalMs: 1_000 })
      : createMemoryBus();
  const start = () =>
    startUsage({
      pool,
      bus,
      port: 0,
      logger,
      signingKeySecret: signingSecret,
      readinessIntervalMs: 200,
    });
  let running = await start();
  let client = createClient(usage.UsageServiceClient, `127.0.0.1:${running.port}`);
  let stopped = false;
  const count = async (condition: string, values: unknown[] = []) => {
    const { rows } = await pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM usage.records r WHERE ${condition}`,
      values,
    );
    return rows[0]?.n ?? 0;
  };
  const harness: UsageHarness = {
    pool,
    bus,
    get running() {
      return running;
    },
    get client() {
      return client;
    },
    call: (method, request) => callUnary("usage", client, method, request, { deadlineMs: 30_000 }),
    // As the gateway's record relay hands them over (a resend of a batch is harmless).
    publishRequests: async (records) => {
      await callUnary<usage.AppendRequestRecordsRequest, usage.AppendRequestRecordsResponse>(
        "usage",
        client,
        client.appendRequestRecords,
        { records },
        { deadlineMs: 30_000, actingFor: { accountId: undefined, principal: "gateway" } },
      );
    },
    count,
    waitForCount: async (condition, values, expected, timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs;
      let seen = await count(condition, values);
      while (seen < expected && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        seen = await count(condition, values);
      }
      if (seen < expected) throw new Error(`expected ${expected} records, found ${seen}`);
    },
    stopService: async () => {
      if (stopped) return;
      stopped = true;
      client.close();
      await running.stop();
    },
    restartService: async () => {
      if (!stopped) return;
      running = await start();
      client = createClient(usage.UsageServiceClient, `127.0.0.1:${running.port}`);
      stopped = false;
    },
    stop: async () => {
      await harness.stopService();
      if ("obliterate" in bus) {
        const bullmq = bus as EventBus & { obliterate(queue: string): Promise<void> };
        for (const queue of eventQueueNames("usage"))
          await bullmq.obliterate(queue).catch(() => undefined);
      }
      await bus.close();
      await pool.end();
      await database.drop();
    },
  };
  return harness;
}

/** A gateway record with sensible defaults. */
export function requestRecord(overrides: Partial<usage.RequestRecord> = {}): usage.RequestRecord {
  return {
    requestId: newId("req"),
    occurredAt: new Date().toISOString(),
    accountId: "acct_test",
    principal: "cli_test",
    method: "GET",
    route: "/api/numbers/search",
    status: 200,
    latencyMs: 1.2345,
    replayed: false,
    resourceId: undefined,
    ...overrides,
  };
}

export { failure };
