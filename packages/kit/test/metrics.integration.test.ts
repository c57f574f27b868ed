import { credentials, makeGenericClientConstructor, type Client } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool } from "../src/db.js";
import { DomainError } from "../src/errors.js";
import { randomName, requireTestRedis, testBusKinds } from "../src/events/testing.js";
import { RetryLaterError, UnrecoverableJobError } from "../src/events/index.js";
import { callUnary } from "../src/grpc-client.js";
import { startGrpcServer, unary, type RunningGrpcServer } from "../src/grpc-server.js";
import { createLogger } from "../src/logger.js";
import { grpcMethodLabels, metricsRegistry } from "../src/metrics/index.js";
import { createRealTestDatabase, type TestDatabase } from "../src/testing.js";
import {
  parsePrometheusText,
  samplesOf,
  valueOf,
  type Sample,
} from "@switchboard/test-support/prometheus-text";

await requireTestRedis();

const logger = createLogger("metrics-test", { level: "silent" });
const scrape = async (): Promise<Sample[]> => parsePrometheusText(await metricsRegistry.metrics());
const waitFor = async (check: () => Promise<boolean>, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting for a condition");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

const json = {
  serialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer) => JSON.parse(bytes.toString()) as unknown,
};
/** A one-method service with JSON messages: enough to drive kit's unary() and callUnary(). */
const echoDefinition = {
  Echo: {
    path: "/test.metrics.v1.EchoService/Echo",
    requestStream: false,
    responseStream: false,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
  },
};
type EchoRequest = { text: string };
type EchoClient = Client & { Echo: Parameters<typeof callUnary<EchoRequest, EchoRequest>>[2] };

describe("gRPC metrics", () => {
  let server: RunningGrpcServer;
  let client: EchoClient;
  beforeAll(async () => {
    server = await startGrpcServer({
      name: "echo",
      port: 0,
      logger,
      services: [
        {
          definition: echoDefinition,
          implementation: {
            Echo: unary<EchoRequest, EchoRequest>(logger, async (request) => {
              if (request.text === "missing") throw new DomainError("not-found", "nothing here");
              if (request.text === "boom") throw new Error("a bug");
              return request;
            }),
          },
        },
      ],
    });
    const Echo = makeGenericClientConstructor(echoDefinition, "EchoService");
    client = new Echo(`127.0.0.1:${server.port}`, credentials.createInsecure()) as EchoClient;
  });
  afterAll(async () => {
    client?.close();
    await server?.drain(1_000);
  });

  it("counts each call on both sides by service, method and status code, with durations", async () => {
    const call = (text: string) =>
      callUnary("echo", client, client.Echo, { text }, { deadlineMs: 2_000 });
    await call("hello");
    await call("again");
    await expect(call("missing")).rejects.toMatchObject({ kind: "not-found" });
    await expect(call("boom")).rejects.toMatchObject({ kind: "internal" });
    const samples = await scrape();
    const labels = { service: "test.metrics.v1.EchoService", method: "Echo" };
    for (const side of ["server", "client"]) {
      const handled = `grpc_${side}_handled_total`;
      expect(valueOf(samples, handled, { ...labels, code: "OK" })).toBe(2);
      expect(valueOf(samples, handled, { ...labels, code: "NOT_FOUND" })).toBe(1);
      expect(valueOf(samples, handled, { ...labels, code: "INTERNAL" })).toBe(1);
      expect(valueOf(samples, `grpc_${side}_handling_seconds_count`, labels)).toBe(4);
      expect(
        samplesOf(samples, `grpc_${side}_handling_seconds_bucket`, labels).length,
      ).toBeGreaterThan(5);
    }
  });

  it("a call that never reaches a server is counted UNAVAILABLE by the client", async () => {
    const Echo = makeGenericClientConstructor(echoDefinition, "EchoService");
    const nowhere = new Echo("127.0.0.1:1", credentials.createInsecure()) as EchoClient;
    try {
      await expect(
        callUnary("echo", nowhere, nowhere.Echo, { text: "x" }, { deadlineMs: 1_000 }),
      ).rejects.toThrow();
    } finally {
      nowhere.close();
    }
    const samples = await scrape();
    expect(
      valueOf(samples, "grpc_client_handled_total", { method: "Echo", code: "UNAVAILABLE" }),
    ).toBe(1);
  });

  it("splits a method path into service and method labels", () => {
    expect(grpcMethodLabels("/switchboard.inventory.v1.InventoryService/SearchNumbers")).toEqual({
      service: "switchboard.inventory.v1.InventoryService",
      method: "SearchNumbers",
    });
    expect(grpcMethodLabels("nonsense")).toEqual({ service: "unknown", method: "nonsense" });
  });
});

describe("PostgreSQL pool metrics (real PostgreSQL)", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createRealTestDatabase("metrics");
  });
  afterAll(async () => {
    await database?.drop();
  });

  it("report total, idle and waiting connections and the maximum per pool until it ends", async () => {
    const pool = createPool(database.url, { name: "metrics-test", max: 2 });
    const held = await Promise.all([pool.connect(), pool.connect()]);
    const waiting = pool.query("SELECT 1");
    let samples = await scrape();
    const state = (s: string) =>
      valueOf(samples, "db_pool_connections", { pool: "metrics-test", state: s });
    expect(state("total")).toBe(2);
    expect(state("idle")).toBe(0);
    expect(state("waiting")).toBe(1);
    expect(valueOf(samples, "db_pool_max", { pool: "metrics-test" })).toBe(2);
    for (const client of held) client.release();
    await waiting;
    samples = await scrape();
    expect(state("idle")).toBe(2);
    expect(state("waiting")).toBe(0);
    await pool.end();
    samples = await scrape();
    expect(samplesOf(samples, "db_pool_connections", { pool: "metrics-test" })).toEqual([]);
    expect(samplesOf(samples, "db_pool_max", { pool: "metrics-test" })).toEqual([]);
  });
});

describe.each(testBusKinds)("queue metrics: $name bus", (kind) => {
  it("queue_jobs reports the consumed queue's depth at scrape time; outcomes are counted", async () => {
    const testBus = kind.create();
    const { bus } = testBus;
    const queue = randomName("metrics");
    try {
      await bus.publish(queue, { name: "later", data: {} }, { delay: 60_000 });
      for (const outcome of ["ok", "retry", "fatal"]) {
        await bus.publish(queue, { name: outcome, data: { outcome } }, { attempts: 2 });
      }
      let samples = await scrape();
      // Not consumed in this process yet: not reported.
      expect(samplesOf(samples, "queue_jobs", { queue })).toEqual([]);

      const worker = bus.consume<{ outcome: string }>(queue, async (job) => {
        if (job.data.outcome === "retry" && job.attempt === 1)
          throw new RetryLaterError("again", 0);
        if (job.data.outcome === "fatal") throw new UnrecoverableJobError("no");
      });
      const processed = (outcome: string) =>
        valueOf(samples, "queue_jobs_processed_total", { queue, outcome });
      await waitFor(async () => {
        samples = await scrape();
        return processed("completed") === 2 && processed("failed") === 1;
      });
      expect(processed("retry")).toBe(1);
      const depth = (state: string) => valueOf(samples, "queue_jobs", { queue, state });
      expect(depth("delayed")).toBe(1);
      expect(depth("waiting")).toBe(0);
      expect(depth("active")).toBe(0);
      expect(depth("failed")).toBe(1);
      await worker.close();
    } finally {
      await testBus.dispose([queue]);
    }
    // A closed bus's queues leave the gauge.
    expect(samplesOf(await scrape(), "queue_jobs", { queue })).toEqual([]);
  });
});
