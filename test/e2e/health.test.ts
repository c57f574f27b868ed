import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkHealth, createHealthClient, type ReadinessReport } from "@switchboard/kit";
import { requireTestRedis } from "@switchboard/kit/events/testing";
import { startTestPlatform, type TestPlatform } from "@switchboard/test-support/platform";
import { startTcpProxy, type TcpProxy } from "@switchboard/test-support/tcp-proxy";

await requireTestRedis();

const services = ["inventory", "usage", "call-control", "messaging", "webhook"];
const backendChecks = ["inventory", "usage", "call_control", "messaging", "webhook"];

const waitFor = async (check: () => Promise<boolean>, what: string, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

/**
 * Health that tells the truth, on real PostgreSQL and Redis: the platform's database
 * connections go through a proxy the test cuts and restores, and the admin port's /readyz and
 * every service's grpc.health.v1 follow.
 */
describe("health and readiness (PostgreSQL + Redis)", () => {
  let proxy: TcpProxy;
  let p: TestPlatform;
  let admin: string;
  const healthClients = new Map<string, ReturnType<typeof createHealthClient>>();
  const grpcStatus = (service: string) => checkHealth(healthClients.get(service)!, "", 1_000);
  const readyz = async () => {
    const response = await fetch(`${admin}/readyz`);
    return { code: response.status, body: (await response.json()) as ReadinessReport };
  };

  beforeAll(async () => {
    proxy = await startTcpProxy({ host: "127.0.0.1", port: 5432 });
    p = await startTestPlatform({
      redis: true,
      admin: true,
      connectThrough: (url) => {
        const through = new URL(url);
        through.host = `127.0.0.1:${proxy.port}`;
        return through.toString();
      },
    });
    admin = p.admin!.url;
    for (const name of services) {
      healthClients.set(name, createHealthClient(`127.0.0.1:${p.platform.services[name]!.port}`));
    }
  });
  afterAll(async () => {
    for (const client of healthClients.values()) client.close();
    await proxy?.restore();
    await p?.stop();
    await proxy?.close();
  });

  it("the first probe after start passes: /api/health pass, /readyz 200, every service SERVING", async () => {
    const health = await p.request("/api/health");
    expect(health.status).toBe(200);
    const body = (await health.json()) as { status: string; checks: Record<string, string> };
    expect(body.status).toBe("pass");
    const ready = await readyz();
    expect(ready.code).toBe(200);
    expect(ready.body.status).toBe("pass");
    for (const check of ["gateway", "postgres", "redis", ...backendChecks]) {
      expect(ready.body.checks[check], check).toBe("pass");
    }
    for (const service of services) expect(await grpcStatus(service), service).toBe("SERVING");
  });

  it("/livez is 200", async () => {
    const response = await fetch(`${admin}/livez`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "pass" });
  });

  it("PostgreSQL unreachable: /readyz 503, every service NOT_SERVING; back: 200 and SERVING", async () => {
    await proxy.cut();
    await waitFor(async () => (await readyz()).code === 503, "/readyz 503");
    expect((await readyz()).body.checks.postgres).toBe("fail");
    for (const service of services) {
      await waitFor(
        async () => (await grpcStatus(service)) === "NOT_SERVING",
        `${service} NOT_SERVING`,
      );
    }
    // The public health keeps its contract: degraded is `warn`, never 503.
    const degraded = await p.request("/api/health");
    expect(degraded.status).toBe(200);
    expect(((await degraded.json()) as { status: string }).status).toBe("warn");
    expect((await fetch(`${admin}/livez`)).status).toBe(200);

    await proxy.restore();
    for (const service of services) {
      await waitFor(async () => (await grpcStatus(service)) === "SERVING", `${service} SERVING`);
    }
    await waitFor(async () => (await readyz()).code === 200, "/readyz 200");
    expect((await readyz()).body.status).toBe("pass");
  });

  it("a gateway whose Redis is unreachable is still ready: redis only warns (rate limits fail open)", async () => {
    const gateway = await p.startReplica({ REDIS_URL: "redis://127.0.0.1:1" });
    try {
      const report = await gateway.readiness();
      expect(report.status).toBe("warn");
      expect(report.checks.redis).toBe("warn");
      expect(report.checks.postgres).toBe("pass");
    } finally {
      await gateway.stop();
    }
  });

  it("a backend down fails the gateway's readiness, naming it", async () => {
    await p.stopService("messaging");
    try {
      const ready = await readyz();
      expect(ready.code).toBe(503);
      expect(ready.body.checks.messaging).toBe("fail");
      expect(ready.body.checks.inventory).toBe("pass");
    } finally {
      await p.restartService("messaging");
      healthClients.get("messaging")!.close();
      healthClients.set(
        "messaging",
        createHealthClient(`127.0.0.1:${p.platform.services.messaging!.port}`),
      );
    }
    await waitFor(async () => (await readyz()).code === 200, "/readyz 200 again");
  });

  it("from markShuttingDown on, /readyz is 503", async () => {
    p.admin!.markShuttingDown();
    const ready = await readyz();
    expect(ready.code).toBe(503);
    expect(ready.body).toEqual({ status: "fail", checks: { shutdown: "fail" } });
  });
});
