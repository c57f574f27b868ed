import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPool } from "../src/db.js";
import { createBullmqBus } from "../src/events/bus-bullmq.js";
import { createMemoryBus } from "../src/events/bus-memory.js";
import { requireTestRedis, testRedisUrl } from "../src/events/testing.js";
import { checkHealth, createHealthClient } from "../src/grpc-health-client.js";
import { startGrpcServer, type RunningGrpcServer } from "../src/grpc-server.js";
import { startServiceHealth } from "../src/health-service.js";
import { watchDependencies, worstOf, type CheckState } from "../src/health-watch.js";
import { createLogger } from "../src/logger.js";
import { createRealTestDatabase, type TestDatabase } from "../src/testing.js";

await requireTestRedis();

const logger = createLogger("health-test", { level: "silent" });

describe("watchDependencies", () => {
  it("reports every check, the worst state, and calls onChange only when readiness flips", async () => {
    let database: CheckState = "pass";
    const changes: string[] = [];
    const watch = watchDependencies({
      checks: { postgres: async () => database, redis: async () => "warn" },
      intervalMs: 60_000,
      onChange: (report) => changes.push(report.status),
    });
    try {
      expect(watch.current()).toEqual({
        status: "fail",
        checks: { postgres: "fail", redis: "fail" },
      });
      expect(await watch.check()).toEqual({
        status: "warn",
        checks: { postgres: "pass", redis: "warn" },
      });
      await watch.check();
      database = "fail";
      expect((await watch.check()).status).toBe("fail");
      database = "pass";
      await watch.check();
      expect(changes).toEqual(["warn", "fail", "warn"]);
      expect(watch.current().status).toBe("warn");
    } finally {
      watch.stop();
    }
  });

  it("a check that throws or hangs past the timeout fails", async () => {
    const watch = watchDependencies({
      checks: {
        broken: async () => {
          throw new Error("no");
        },
        stuck: () => new Promise<CheckState>(() => undefined),
        fine: async () => "pass",
      },
      timeoutMs: 50,
      intervalMs: 60_000,
    });
    try {
      expect(await watch.check()).toEqual({
        status: "fail",
        checks: { broken: "fail", stuck: "fail", fine: "pass" },
      });
    } finally {
      watch.stop();
    }
  });

  it("callers during a check share it; re-checks every intervalMs; nothing after stop", async () => {
    let runs = 0;
    const changes: string[] = [];
    const watch = watchDependencies({
      checks: {
        slow: async () => {
          runs += 1;
          await new Promise((resolve) => setTimeout(resolve, 30));
          return runs >= 3 ? "fail" : "pass";
        },
      },
      intervalMs: 100,
      healthyIntervalMs: 100,
      onChange: (report) => changes.push(report.status),
    });
    const [a, b] = await Promise.all([watch.check(), watch.check()]);
    expect(a).toBe(b);
    expect(runs).toBe(1);
    const deadline = Date.now() + 2_000;
    while (runs < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(changes).toEqual(["pass", "fail"]);
    watch.stop();
    const after = runs;
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(runs).toBe(after);
  });

  it("re-checks slowly while everything passes and quickly while something fails", async () => {
    let state: "pass" | "fail" = "pass";
    const at: number[] = [];
    const watch = watchDependencies({
      checks: {
        db: async () => {
          at.push(Date.now());
          return state;
        },
      },
      intervalMs: 40,
      healthyIntervalMs: 400,
    });
    await watch.check();
    await new Promise((resolve) => setTimeout(resolve, 500));
    const healthy = at.length;
    expect(healthy).toBeLessThanOrEqual(3);
    state = "fail";
    await watch.check();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(at.length - healthy).toBeGreaterThanOrEqual(6);
    watch.stop();
  });

  it("worstOf: fail over warn over pass; nothing passes", () => {
    expect(worstOf([])).toBe("pass");
    expect(worstOf(["pass", "warn"])).toBe("warn");
    expect(worstOf(["warn", "fail", "pass"])).toBe("fail");
  });
});

describe("startServiceHealth (real PostgreSQL and Redis)", () => {
  let database: TestDatabase;
  const servers: RunningGrpcServer[] = [];
  const start = () =>
    startGrpcServer({ name: "health-test", services: [], port: 0, logger }).then((server) => {
      servers.push(server);
      return server;
    });
  beforeAll(async () => {
    database = await createRealTestDatabase("health");
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.drain(500)));
    await database?.drop();
  });

  it("SERVING with PostgreSQL and the queue's Redis answering", async () => {
    const server = await start();
    const pool = createPool(database.url, { name: "health-ok" });
    const bus = createBullmqBus({ redisUrl: testRedisUrl(), prefix: "sbtest-health" });
    const health = createHealthClient(`127.0.0.1:${server.port}`);
    try {
      const watch = await startServiceHealth({ server, pool, bus });
      expect(watch.current()).toEqual({
        status: "pass",
        checks: { postgres: "pass", redis: "pass" },
      });
      expect(await checkHealth(health)).toBe("SERVING");
      watch.stop();
    } finally {
      health.close();
      await bus.close();
      await pool.end();
    }
  });

  it("NOT_SERVING from the first answer when PostgreSQL is unreachable (the in-process queue is not checked)", async () => {
    const server = await start();
    const pool = createPool("postgres://postgres@127.0.0.1:1/none", { name: "health-down" });
    const bus = createMemoryBus();
    const health = createHealthClient(`127.0.0.1:${server.port}`);
    try {
      const watch = await startServiceHealth({ server, pool, bus });
      expect(watch.current()).toEqual({ status: "fail", checks: { postgres: "fail" } });
      expect(await checkHealth(health)).toBe("NOT_SERVING");
      watch.stop();
    } finally {
      health.close();
      await bus.close();
      await pool.end();
    }
  });

  it("once draining, a dependency coming back does not report SERVING again", async () => {
    const server = await start();
    const status = () =>
      (server.health as unknown as { statusMap: Map<string, string> }).statusMap.get("");
    expect(status()).toBe("SERVING");
    const drained = server.drain(200);
    expect(status()).toBe("NOT_SERVING");
    server.setServing(true);
    expect(status()).toBe("NOT_SERVING");
    await drained;
  });
});
