import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { dashboardFile, renderDashboard } from "../../scripts/dashboard.mjs";
import { eventually, startMeshHarness, type MeshHarness } from "../mesh/support/mesh-harness.js";
import { declaredNames, seriesRead } from "./support/promql.js";

const root = resolve(import.meta.dirname, "../..");
const rulesFile = join(root, "charts/switchboard/files/prometheus-rules.yaml");
const has = (tool: string) => spawnSync(tool, ["--version"], { stdio: "ignore" }).status === 0;
const tools = has("promtool") && has("prometheus");
const inCi = Boolean(process.env.CI) && process.env.CI !== "false";
const promtool = (...args: string[]) =>
  spawnSync("promtool", args, { cwd: root, encoding: "utf8" });

interface Rule {
  record?: string;
  alert?: string;
  expr: string;
}
const rules = (
  parse(readFileSync(rulesFile, "utf8")) as { groups: { rules: Rule[] }[] }
).groups.flatMap((group) => group.rules);
const recorded = new Set(rules.flatMap((rule) => (rule.record ? [rule.record] : [])));
const panelQueries = (
  JSON.parse(readFileSync(dashboardFile, "utf8")) as {
    panels: { title?: string; targets?: { expr: string }[] }[];
  }
).panels.flatMap((panel) =>
  (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })),
);
/** Every expression the alerts and the dashboard evaluate, named for failure messages. */
const expressions = [
  ...rules.map((rule) => ({ where: rule.record ?? rule.alert!, expr: rule.expr })),
  ...panelQueries.map(({ panel, expr }) => ({ where: `panel ${panel}`, expr })),
];

describe("the dashboard and the rules, read as files", () => {
  it("the committed dashboard is what scripts/dashboard.mjs builds", () => {
    expect(readFileSync(dashboardFile, "utf8")).toBe(renderDashboard());
    expect(panelQueries.length).toBeGreaterThanOrEqual(15);
  });

  it('every series a rule or a panel reads is selected by job="switchboard"', () => {
    // The scan finds what it must (the check has teeth).
    expect(
      seriesRead('sum by (le) (rate(a_bucket{job="x"}[5m])) / on (q) b > 1e-9 and c:d'),
    ).toEqual([
      { name: "a_bucket", matchers: '{job="x"}' },
      { name: "b", matchers: "" },
      { name: "c:d", matchers: "" },
    ]);
    for (const { where, expr } of expressions) {
      const read = seriesRead(expr);
      expect(read.length, `${where}: ${expr}`).toBeGreaterThan(0);
      for (const { name, matchers } of read) {
        if (recorded.has(name)) continue;
        expect(matchers, `${where}: ${name}`).toContain('job="switchboard"');
      }
    }
  });
});

/**
 * The alerts and the dashboard, checked by the real tools: promtool checks the rules and runs
 * their unit tests; a real Prometheus scrapes a real mesh (built output: `npx tsc -b platform`),
 * evaluates every rule, parses every query of the dashboard and sees an alert go pending when a
 * service stops. Skipped only where Prometheus is missing outside CI (.ci/run installs it).
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
    const tests = readFileSync(join(root, "test/monitoring/rules.test.yaml"), "utf8");
    const alerts = rules.flatMap((rule) => (rule.alert ? [rule.alert] : []));
    expect(alerts.length).toBeGreaterThanOrEqual(8);
    for (const alert of alerts) expect(tests, alert).toContain(`alertname: ${alert}`);
  });

  describe("a real Prometheus scraping the mesh", () => {
    let mesh: MeshHarness;
    let prometheus: ChildProcess | undefined;
    let url: string;
    let dir: string;

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
    const query = <T = unknown>(expr: string) =>
      api<{ status: string; error?: string; data: { result: T[] } }>(
        `/api/v1/query?query=${encodeURIComponent(expr)}`,
      );
    interface RuleState {
      name: string;
      health: string;
      lastError?: string;
    }
    const ruleStates = () =>
      api<{ data: { groups: { rules: RuleState[] }[] } }>("/api/v1/rules").then((r) =>
        r.data.groups.flatMap((group) => group.rules),
      );

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "switchboard-prometheus-"));
      mesh = await startMeshHarness({ seed: 50 });
      // As documented for a plain Prometheus: job "switchboard", each target labelled with its
      // component. The real rules file, unchanged: SwitchboardComponentDown's `for: 1m` is
      // short enough to see it pending (Prometheus reports pending from the first evaluation
      // the expression holds), so no test variant of the rules is needed.
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
      const log = openSync(join(dir, "prometheus.log"), "w");
      prometheus = spawn(
        "prometheus",
        [
          `--config.file=${join(dir, "prometheus.yml")}`,
          `--storage.tsdb.path=${join(dir, "data")}`,
          `--web.listen-address=127.0.0.1:${port}`,
        ],
        { stdio: ["ignore", log, log] },
      );
      closeSync(log);
      const logTail = () => readFileSync(join(dir, "prometheus.log"), "utf8").slice(-2000);
      // Every component scraped and up, then every rule evaluated once.
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
      ).catch((error: Error) => {
        throw new Error(`${error.message}\nprometheus: ${logTail()}`);
      });
      await eventually(
        ruleStates,
        (states) => states.length === rules.length && states.every((r) => r.health !== "unknown"),
        "every rule evaluated",
        30_000,
      );
    }, 180_000);

    afterAll(async () => {
      if (prometheus && prometheus.exitCode === null) {
        const exited = new Promise((done) => prometheus!.once("exit", done));
        prometheus.kill("SIGTERM");
        await exited;
      }
      await mesh?.stop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("evaluates every rule against the mesh's series without an error", async () => {
      for (const rule of await ruleStates()) {
        expect(rule, rule.name).toMatchObject({ health: "ok" });
        expect(rule.lastError ?? "", rule.name).toBe("");
      }
    });

    it("every series a rule or a panel reads is one the processes export", async () => {
      const exported = new Set(["up"]);
      for (const port of Object.values(mesh.mesh.ports.admin)) {
        const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        for (const name of declaredNames(text)) exported.add(name);
      }
      expect(exported.has("http_server_request_duration_seconds_bucket")).toBe(true);
      for (const { where, expr } of expressions) {
        for (const { name } of seriesRead(expr)) {
          expect(exported.has(name) || recorded.has(name), `${where} reads ${name}`).toBe(true);
        }
      }
    });

    it("parses every query of the dashboard; the SLIs and the queues have data", async () => {
      // Traffic so that the request series exist.
      const token = await mesh.token();
      await mesh.request("/v1/api/agents", { token });
      for (const { panel, expr } of panelQueries) {
        const promql = expr.replaceAll("$__rate_interval", "1m");
        expect(await query(promql), `${panel}: ${promql}`).toMatchObject({ status: "success" });
      }
      const up = await query('up{job="switchboard"}');
      expect(up.data.result.length).toBe(Object.keys(mesh.mesh.ports.admin).length);
      // The recording rules select the gateway's real series: both SLIs are a ratio, and no
      // reply was a 5xx (an error ratio of 0, not nothing). How many were slower than 0.5 s
      // depends on the machine.
      const sli = async (name: string) => {
        const answer = await eventually(
          () => query<{ value: [number, string] }>(name),
          (r) => r.data.result.length === 1,
          name,
          30_000,
        );
        return Number(answer.data.result[0]!.value[1]);
      };
      expect(await sli("switchboard:gateway_errors:ratio_rate5m")).toBe(0);
      const slow = await sli("switchboard:gateway_slow:ratio_rate5m");
      expect(slow).toBeGreaterThanOrEqual(0);
      expect(slow).toBeLessThanOrEqual(1);
      // The queue alerts watch the usage and webhook queues.
      const queues = await query<{ metric: { queue: string } }>(
        'max by (queue) (queue_oldest_waiting_seconds{job="switchboard"})',
      );
      const names = queues.data.result.map((series) => series.metric.queue).join(" ");
      expect(names).toMatch(/usage/);
      expect(names).toMatch(/webhook/);
    }, 60_000);

    it("sees SwitchboardComponentDown go pending when a service stops", async () => {
      const before = await api<{ data: { alerts: { labels: Record<string, string> }[] } }>(
        "/api/v1/alerts",
      );
      expect(
        before.data.alerts.filter((a) => a.labels.alertname === "SwitchboardComponentDown"),
      ).toEqual([]);
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
