import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { chartDir, ofKind, renderObjects } from "./support/render.js";

const enabled = {
  set: [
    "metrics.serviceMonitor.enabled=true",
    "metrics.prometheusRule.enabled=true",
    "metrics.prometheusRule.labels.release=kube-prometheus-stack",
    "metrics.dashboard.enabled=true",
  ],
};

interface Spec {
  spec: Record<string, unknown>;
}
interface ConfigMap {
  data: Record<string, string>;
}

/**
 * The monitoring objects carry the chart's files unchanged: files/prometheus-rules.yaml is the
 * one source of the alerts (test/monitoring runs promtool and a real Prometheus over it), and
 * files/dashboard.json is what scripts/dashboard.mjs builds.
 */
describe("the PrometheusRule and the dashboard ConfigMap", () => {
  it("renders neither with the default values", () => {
    const objects = renderObjects();
    expect(ofKind(objects, "PrometheusRule")).toEqual([]);
    expect(objects.filter((o) => o.metadata.name.endsWith("-dashboard"))).toEqual([]);
  });

  it("the PrometheusRule's spec is files/prometheus-rules.yaml, with its labels", () => {
    const [rule, ...more] = ofKind<Spec>(renderObjects(enabled), "PrometheusRule");
    expect(more).toEqual([]);
    expect(rule!.metadata.labels).toMatchObject({
      "app.kubernetes.io/name": "switchboard",
      release: "kube-prometheus-stack",
    });
    const file = parse(readFileSync(join(chartDir, "files/prometheus-rules.yaml"), "utf8"));
    expect(rule!.spec).toEqual(file);
    // Templates in the annotations reach Prometheus as they are, not evaluated by helm.
    expect(JSON.stringify(rule!.spec)).toContain("{{ $labels.component }} is down");
  });

  it("the dashboard ConfigMap holds files/dashboard.json for the Grafana sidecar", () => {
    const [dashboard] = ofKind<ConfigMap>(renderObjects(enabled), "ConfigMap").filter(
      (o) => o.metadata.name === "switchboard-dashboard",
    );
    expect(dashboard!.metadata.labels).toMatchObject({ grafana_dashboard: "1" });
    const json = readFileSync(join(chartDir, "files/dashboard.json"), "utf8");
    expect(dashboard!.data).toEqual({ "switchboard.json": json });
    // Well under what `kubectl apply` keeps in its last-applied annotation (256 KiB).
    expect(Buffer.byteLength(json)).toBeLessThan(200 * 1024);
  });

  it("the ServiceMonitor gives every target the job and component the alerts select", () => {
    const objects = renderObjects(enabled);
    const [monitor] = ofKind<Spec>(objects, "ServiceMonitor");
    const spec = monitor!.spec as {
      jobLabel: string;
      endpoints: { relabelings: { sourceLabels: string[]; targetLabel: string }[] }[];
    };
    const services = ofKind(objects, "Service");
    expect(services.length).toBe(6);
    // job="switchboard" on every component: the rules and panels read `job="switchboard"`.
    for (const service of services) {
      expect(service.metadata.labels?.[spec.jobLabel], service.metadata.name).toBe("switchboard");
    }
    expect(spec.endpoints[0]!.relabelings).toContainEqual({
      sourceLabels: ["__meta_kubernetes_service_label_app_kubernetes_io_component"],
      targetLabel: "component",
    });
  });
});
