import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dashboardFile, renderDashboard } from "../../scripts/dashboard.mjs";
import { eventually, startMeshHarness, type MeshHarness } from "../mesh/support/mesh-harness.js";

const root = resolve(import.meta.dirname, "../..");
const rulesFile = join(root, "charts/switchboard/files/prometheus-rules.yaml");
const has = (tool: string) => spawnSync(tool, ["--version"], { stdio: "ignore" }).status === 0;
const tools = has("promtool") && has("prometheus");
const inCi = Boolean(process.env.CI) && process.env.CI !== "false";
const promtool = (...args: string[]) =>
  spawnSync("promtool", args, { cwd: root, encoding: "utf8" });

/**
 * The alerts and the dashboard, checked by the real tools: promtool checks the rules and runs
 * their unit tests; a real Prometheus scrapes a real mesh, sees an alert go pending when a
 * service stops, and parses every query of the dashboard. Skipped only where Prometheus is
 * missing outside CI (.ci/run installs it).
 */
describe.skipIf(!tools && !inCi)("alerts and dashboard", () => {
  it("promtool check rules accepts the rules file", () => {
    const result = promtool("check", "rules", rulesFile);
    expect(result.stdout + result.stderr).toContain("SUCCESS");
    expect(result.status).toBe(0);
  });

  it("promtool test rules: every alert fires on its case (test/monitoring/rules.test.yaml)", () => {
    const result = promtool("test", "rules", "test/monitoring/rules.test.yaml");
    expect(result.stdout + result.stderr).toContain("SUCCESS");
    expect(result.status).toBe(0);
    const rules = readFileSync(rulesFile, "utf8");
    const tests = readFileSync(join(root, "test/monitoring/rules.test.yaml"), "utf8");
    const alerts = [...rules.matchAll(/- alert: (\w+)/g)].map((m) => m[1]!);
    expect(alerts.length).toBeGreaterThanOrEqual(8);
    for (const alert of alerts) expect(tests, alert).toContain(`alertname: ${alert}`);
  });

  it("the committed dashboard is what scripts/dashboard.mjs builds", () => {
    expect(readFileSync(dashboardFile, "utf8")).toBe(renderDashboard());
  });

  describe("a real Prometheus scraping the mesh", () => {
    let mesh: MeshHarness;
    let prometheus: ChildProcess;
    let url: string;
    const dir = mkdtempSync(join(tmpdir(), "switchboard-prometheus-"));

    const freePort = () =>
      new Promise<number>((done) => {
        const server = createServer();
        server.listen(0, "127.0.0.1", () => {
          const address = server.address();
          server.close(() => done(typeof address === "object" && address ? address.port : 0));
        });
      });
    const api = async <T>(path: string): Promise<T> =>
      (await (await fetch(`${url}${path}`)).json()) as T;

    beforeAll(async () => {
      mesh = await startMeshHarness({ seed: 50 });
      const targets = Object.entries(mesh.mesh.ports.admin).map(([component, port]) => ({
        targets: [`127.0.0.1:${port}`],
        labels: { component },
      }));
      writeFileSync(
        join(dir, "prometheus.yml"),
        JSON.stringify({
          global: { scrape_interval: "1s", evaluation_interval: "1s" },
          rule_files: [rulesFile],
          scrape_configs: [{ job_name: "switchboard", static_configs: targets }],
        }),
      );
      const port = await freePort();
      url = `http://127.0.0.1:${port}`;
      prometheus = spawn(
        "prometheus",
        [
          `--config.file=${join(dir, "prometheus.yml")}`,
          `--storage.tsdb.path=${join(dir, "data")}`,
          `--web.listen-address=127.0.0.1:${port}`,
        ],
        { stdio: "ignore" },
      );
      // Every component scraped and up.
      await eventually(
        () =>
          api<{ data: { activeTargets: { health: string }[] } }>("/api/v1/targets").catch(() => ({
            data: { activeTargets: [] },
          })),
        (r) =>
          r.data.activeTargets.length === targets.length &&
          r.data.activeTargets.every((t) => t.health === "up"),
        "every target up",
        60_000,
      );
    }, 180_000);

    afterAll(async () => {
      prometheus?.kill("SIGTERM");
      await mesh?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it("parses every query of the dashboard", async () => {
      const dashboard = JSON.parse(readFileSync(dashboardFile, "utf8")) as {
        panels: { title?: string; targets?: { expr: string }[] }[];
      };
      const queries = dashboard.panels.flatMap((panel) =>
        (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })),
      );
      expect(queries.length).toBeGreaterThanOrEqual(15);
      // Traffic so that the series exist.
      const token = await mesh.token();
      await mesh.request("/v1/api/agents", { token });
      for (const { panel, expr } of queries) {
        const query = expr.replaceAll("$__rate_interval", "1m");
        const answer = await api<{ status: string; error?: string }>(
          `/api/v1/query?query=${encodeURIComponent(query)}`,
        );
        expect(answer, `${panel}: ${query}`).toMatchObject({ status: "success" });
      }
      const up = await api<{ data: { result: unknown[] } }>(
        `/api/v1/query?query=${encodeURIComponent('up{component!=""}')}`,
      );
      expect(up.data.result.length).toBe(Object.keys(mesh.mesh.ports.admin).length);
    });

    it("sees SwitchboardComponentDown go pending when a service stops", async () => {
      await mesh.mesh.children.usage.stop();
      const alerts = await eventually(
        () =>
          api<{ data: { alerts: { labels: Record<string, string>; state: string }[] } }>(
            "/api/v1/alerts",
          ),
        (r) =>
          r.data.alerts.some(
            (a) =>
              a.labels.alertname === "SwitchboardComponentDown" &&
              a.labels.component === "usage" &&
              (a.state === "pending" || a.state === "firing"),
          ),
        "SwitchboardComponentDown for usage",
        30_000,
      );
      const others = alerts.data.alerts.filter(
        (a) => a.labels.alertname === "SwitchboardComponentDown" && a.labels.component !== "usage",
      );
      expect(others).toEqual([]);
    }, 60_000);
  });
});
