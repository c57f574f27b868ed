import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../src/config.js";
import { loadAdminAddress, startComponentAdmin } from "../src/admin-component.js";
import { startAdminServer, type RunningAdminServer } from "../src/admin-server.js";
import type { ReadinessReport } from "../src/health-watch.js";
import { createLogger } from "../src/logger.js";
import { switchboardVersion } from "../src/metrics/index.js";
import { parsePrometheusText, samplesOf } from "@switchboard/test-support/prometheus-text";

const logger = createLogger("admin-test", { level: "silent" });
const servers: RunningAdminServer[] = [];
const start = async (options: Partial<Parameters<typeof startAdminServer>[0]> = {}) => {
  const server = await startAdminServer({ host: "127.0.0.1", port: 0, logger, ...options });
  servers.push(server);
  return server;
};
const report = (status: ReadinessReport["status"]): ReadinessReport => ({
  status,
  checks: { postgres: status },
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe("admin server", () => {
  it("GET /metrics serves the registry in the Prometheus text format", async () => {
    const admin = await start();
    const response = await fetch(`${admin.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    const samples = parsePrometheusText(await response.text());
    expect(samplesOf(samples, "process_cpu_user_seconds_total")).toHaveLength(1);
    expect(samplesOf(samples, "nodejs_eventloop_lag_seconds")).toHaveLength(1);
  });

  it("GET /livez is 200 while live and 503 when the live check says otherwise", async () => {
    const live = await start();
    expect((await fetch(`${live.url}/livez`)).status).toBe(200);
    const wedged = await start({ live: () => false });
    const response = await fetch(`${wedged.url}/livez`);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ status: "fail" });
  });

  it("GET /readyz: 503 starting until ready is set, then 200 pass/warn and 503 fail", async () => {
    let state: ReadinessReport["status"] = "pass";
    const admin = await start();
    const starting = await fetch(`${admin.url}/readyz`);
    expect(starting.status).toBe(503);
    expect(await starting.json()).toEqual({ status: "fail", checks: { starting: "fail" } });

    admin.setReady(async () => report(state));
    const ready = await fetch(`${admin.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.headers.get("content-type")).toBe("application/json");
    expect(await ready.json()).toEqual(report("pass"));
    state = "warn";
    expect((await fetch(`${admin.url}/readyz`)).status).toBe(200);
    state = "fail";
    const failing = await fetch(`${admin.url}/readyz`);
    expect(failing.status).toBe(503);
    expect(await failing.json()).toEqual(report("fail"));
  });

  it("GET /readyz answers 503 when the readiness check outlasts its timeout", async () => {
    const admin = await start({
      ready: () => new Promise<ReadinessReport>(() => undefined),
      readyTimeoutMs: 50,
    });
    const response = await fetch(`${admin.url}/readyz`);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ status: "fail", checks: { timeout: "fail" } });
  });

  it("after markShuttingDown /readyz is 503 and /livez stays 200", async () => {
    const admin = await start({ ready: async () => report("pass") });
    admin.markShuttingDown();
    const response = await fetch(`${admin.url}/readyz`);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ status: "fail", checks: { shutdown: "fail" } });
    expect((await fetch(`${admin.url}/livez`)).status).toBe(200);
  });

  it("answers 404 for other paths and 405 for other methods", async () => {
    const admin = await start();
    expect((await fetch(`${admin.url}/`)).status).toBe(404);
    expect((await fetch(`${admin.url}/metrics/extra`)).status).toBe(404);
    const post = await fetch(`${admin.url}/metrics`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
    expect((await fetch(`${admin.url}/livez`, { method: "HEAD" })).status).toBe(200);
  });

  it("close() frees the port", async () => {
    const admin = await startAdminServer({ host: "127.0.0.1", port: 0, logger });
    await admin.close();
    await expect(fetch(`${admin.url}/livez`)).rejects.toThrow();
    const again = await start({ port: admin.port });
    expect(again.port).toBe(admin.port);
  });
});

describe("component admin address", () => {
  it("reads ADMIN_PORT and ADMIN_HOST over the component's defaults", () => {
    // Loopback unless told otherwise (the chart sets ADMIN_HOST=0.0.0.0).
    expect(loadAdminAddress({ port: 9093 }, {})).toEqual({ host: "127.0.0.1", port: 9093 });
    expect(loadAdminAddress({ port: 9090, host: "0.0.0.0" }, {})).toEqual({
      host: "0.0.0.0",
      port: 9090,
    });
    expect(loadAdminAddress({ port: 9093 }, { ADMIN_PORT: "0", ADMIN_HOST: "::1" })).toEqual({
      host: "::1",
      port: 0,
    });
  });

  it("refuses a bad ADMIN_PORT, naming the variable", () => {
    expect(() => loadAdminAddress({ port: 9090 }, { ADMIN_PORT: "http" })).toThrow(ConfigError);
    expect(() => loadAdminAddress({ port: 9090 }, { ADMIN_PORT: "70000" })).toThrow(/ADMIN_PORT/);
  });

  it("startComponentAdmin marks the component in switchboard_build_info", async () => {
    const admin = await startComponentAdmin({
      component: "inventory",
      defaultPort: 9091,
      logger,
      env: { ADMIN_PORT: "0", ADMIN_HOST: "127.0.0.1" },
    });
    servers.push(admin);
    const samples = parsePrometheusText(await (await fetch(`${admin.url}/metrics`)).text());
    expect(samplesOf(samples, "switchboard_build_info", { component: "inventory" })).toEqual([
      {
        name: "switchboard_build_info",
        labels: { component: "inventory", version: switchboardVersion },
        value: 1,
      },
    ]);
    expect(switchboardVersion).toMatch(/^\d+\.\d+\.\d+/);
  });
});
