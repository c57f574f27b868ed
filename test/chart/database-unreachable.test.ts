import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { createRealTestDatabase, type TestDatabase } from "@switchboard/kit/testing";
import { testRedisUrl } from "@switchboard/test-support/platform";
import { startTcpProxy } from "@switchboard/test-support/tcp-proxy";
import { eventually } from "@switchboard/test-support/waiting";
import { freePort, startServiceProcess, type ServiceProcess } from "./support/service-process.js";

/** Every line a process wrote, parsed: each must be one JSON log record. */
const records = (output: string) =>
  output
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`not a structured log line: ${line}`);
      }
    });

const serviceEnv = async (databaseUrl: string, budgetMs: number) => ({
  DATABASE_URL: databaseUrl,
  REDIS_URL: testRedisUrl(),
  REDIS_QUEUE_PREFIX: `sbdbwait_${randomBytes(4).toString("hex")}`,
  INTERNAL_SECRET: randomBytes(32).toString("base64url"),
  ADMIN_PORT: String(await freePort()),
  INVENTORY_GRPC_PORT: String(await freePort()),
  STARTUP_WAIT_MS: String(budgetMs),
});

// A pod whose PostgreSQL is unreachable at start: structured lines naming what is unreachable,
// retries with backoff within STARTUP_WAIT_MS (the chart: the startup probe's budget), then exit 1.
describe("a service whose PostgreSQL is unreachable at start", () => {
  const processes: ServiceProcess[] = [];
  let database: TestDatabase | undefined;
  afterAll(async () => {
    for (const process of processes) await process.stop();
    await database?.drop();
  });

  it("logs one structured line per attempt, no stack trace, and exits 1 when the budget is spent", async () => {
    const closedPort = await freePort();
    const secret = "hunter2-not-logged";
    const started = Date.now();
    const service = startServiceProcess(
      "services/inventory/dist/main.js",
      await serviceEnv(`postgres://switchboard:${secret}@127.0.0.1:${closedPort}/inventory`, 3_000),
    );
    processes.push(service);
    expect(await service.exited).toBe(1);
    const elapsed = Date.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(3_000);
    expect(elapsed).toBeLessThan(20_000);
    const output = service.output();
    expect(output).not.toContain(secret);
    expect(output).not.toMatch(/^\s+at /m);
    const lines = records(output).filter((record) => record.dependency === "postgres");
    expect(lines.length).toBeGreaterThanOrEqual(3);
    for (const line of lines) {
      expect(line).toMatchObject({
        target: `127.0.0.1:${closedPort}/inventory`,
        code: "ECONNREFUSED",
      });
      expect(line).not.toHaveProperty("stack");
    }
    expect(lines.at(-1)!.msg).toBe("PostgreSQL unreachable at start: giving up");
    expect(
      lines.slice(0, -1).every((line) => line.msg === "PostgreSQL unreachable at start: retrying"),
    ).toBe(true);
  }, 30_000);

  it("starts once PostgreSQL answers within the budget", async () => {
    database = await createRealTestDatabase("dbwait");
    const proxy = await startTcpProxy({ host: "127.0.0.1", port: 5432 });
    await proxy.cut();
    const url = new URL(database.url);
    url.port = String(proxy.port);
    const env = await serviceEnv(url.toString(), 60_000);
    const service = startServiceProcess("services/inventory/dist/main.js", env);
    processes.push(service);
    await eventually(
      async () => service.output().includes("PostgreSQL unreachable at start: retrying"),
      Boolean,
      15_000,
    );
    await proxy.restore();
    const status = await eventually(
      async () =>
        (await fetch(`http://127.0.0.1:${env.ADMIN_PORT}/readyz`).catch(() => undefined))?.status,
      (code) => code === 200,
      30_000,
    );
    expect(status, service.output().slice(-2000)).toBe(200);
    expect(service.child.exitCode).toBeNull();
    await proxy.close();
  }, 60_000);
});
