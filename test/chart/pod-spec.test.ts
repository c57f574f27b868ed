import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { IDeployment } from "kubernetes-models/apps/v1";
import type { IConfigMap, IService, IServiceAccount } from "kubernetes-models/v1";
import { renderChart } from "../../scripts/helm-render.mjs";
import { componentOf, ofKind, renderObjects, valuesMatrix } from "./support/render.js";

const root = join(import.meta.dirname, "..", "..");

describe.each(valuesMatrix)("pods rendered with $name", ({ files }) => {
  const objects = renderObjects({ valuesFiles: files });
  const deployments = ofKind<IDeployment>(objects, "Deployment");
  const configMaps = ofKind<IConfigMap>(objects, "ConfigMap");
  const services = ofKind<IService>(objects, "Service");
  const settingsOf = (component: string) =>
    configMaps.find((configMap) => componentOf(configMap) === component)!.data!;

  it("are hardened: non-root, read-only root, no privilege escalation, no capabilities", () => {
    expect(deployments.length).toBeGreaterThan(0);
    for (const deployment of deployments) {
      const pod = deployment.spec!.template.spec!;
      expect(pod.securityContext?.runAsNonRoot, deployment.metadata.name).toBe(true);
      expect(pod.securityContext?.runAsUser).toBeGreaterThan(0);
      expect(pod.securityContext?.seccompProfile?.type).toBe("RuntimeDefault");
      expect(pod.automountServiceAccountToken).toBe(false);
      expect(pod.enableServiceLinks).toBe(false);
      expect(pod.volumes).toContainEqual({ name: "tmp", emptyDir: expect.any(Object) });
      for (const container of [...pod.containers, ...(pod.initContainers ?? [])]) {
        const context = container.securityContext!;
        expect(context.allowPrivilegeEscalation, container.name).toBe(false);
        expect(context.readOnlyRootFilesystem).toBe(true);
        expect(context.privileged).toBe(false);
        expect(context.capabilities?.drop).toEqual(["ALL"]);
        expect(context.capabilities?.add).toBeUndefined();
        expect(container.volumeMounts).toContainEqual({ name: "tmp", mountPath: "/tmp" });
      }
    }
    for (const account of ofKind<IServiceAccount>(objects, "ServiceAccount")) {
      expect(account.automountServiceAccountToken, account.metadata.name).toBe(false);
    }
  });

  it("set CPU and memory requests and limits on every container", () => {
    for (const deployment of deployments) {
      for (const container of deployment.spec!.template.spec!.containers) {
        for (const bound of ["requests", "limits"] as const) {
          expect(container.resources?.[bound]?.cpu, `${container.name} ${bound}`).toBeTruthy();
          expect(container.resources?.[bound]?.memory, `${container.name} ${bound}`).toBeTruthy();
        }
      }
    }
  });

  it("run an entry script that exists in the sources, ready by HTTP /readyz on the admin port", () => {
    for (const deployment of deployments) {
      const [container] = deployment.spec!.template.spec!.containers;
      const [entry] = container!.args!;
      const source = entry!.replace("/dist/", "/src/").replace(/\.js$/, ".ts");
      expect(existsSync(join(root, source)), source).toBe(true);
      // Not the kubelet's gRPC probe: it cannot speak TLS (grpcTls.enabled), nor reach
      // worker-main.js, which serves no gRPC. /readyz follows the same dependency watch.
      expect(container!.readinessProbe?.httpGet, container!.name).toEqual({
        path: "/readyz",
        port: "admin",
      });
      expect(container!.readinessProbe?.grpc, container!.name).toBeUndefined();
    }
  });

  it("retry an unreachable PostgreSQL at start for as long as the startup probe waits", () => {
    for (const deployment of deployments) {
      const probe = deployment.spec!.template.spec!.containers[0]!.startupProbe;
      const wait = settingsOf(componentOf(deployment)!).STARTUP_WAIT_MS;
      if (!probe) {
        expect(wait, deployment.metadata.name).toBeUndefined();
        continue;
      }
      const budgetMs = probe.periodSeconds! * probe.failureThreshold! * 1000;
      expect(Number(wait), deployment.metadata.name).toBe(budgetMs);
    }
  });

  it("give callers addresses of Services that exist on the right port", () => {
    for (const configMap of configMaps) {
      for (const [key, value] of Object.entries(configMap.data ?? {})) {
        if (!key.endsWith("_ADDR")) continue;
        const [host, port] = value.split(":");
        const service = services.find((candidate) => candidate.metadata!.name === host);
        expect(service, `${key}=${value}`).toBeDefined();
        expect(service!.spec!.ports!.map((servicePort) => servicePort.port)).toContain(
          Number(port),
        );
      }
    }
  });

  it("give every pod a grace period longer than preStop plus its drain (call-control: plus calls)", () => {
    for (const deployment of deployments) {
      const component = componentOf(deployment)!;
      const pod = deployment.spec!.template.spec!;
      const preStop = pod.containers[0]!.lifecycle?.preStop?.exec?.command ?? ["sleep", "0"];
      const settings = settingsOf(component);
      const drainSeconds =
        Number(settings.SHUTDOWN_GRACE_MS) / 1000 + Number(settings.CALL_DRAIN_SECONDS ?? 0);
      expect(drainSeconds, component).toBeGreaterThanOrEqual(25);
      if (component === "call-control") expect(drainSeconds).toBe(85);
      expect(pod.terminationGracePeriodSeconds!, component).toBeGreaterThan(
        drainSeconds + Number(preStop[1]),
      );
    }
  });
});

describe("pods rendered with the default values", () => {
  const objects = renderObjects();
  const deployments = ofKind<IDeployment>(objects, "Deployment");

  it("probe every component with HTTP startup and liveness on the admin port", () => {
    for (const deployment of deployments) {
      const container = deployment.spec!.template.spec!.containers[0]!;
      expect(container.livenessProbe?.httpGet).toEqual({ path: "/livez", port: "admin" });
      expect(container.startupProbe?.httpGet).toEqual({ path: "/livez", port: "admin" });
      expect(container.ports).toContainEqual({
        name: "admin",
        containerPort: 9090,
        protocol: "TCP",
      });
      expect(container.lifecycle?.preStop?.exec?.command).toEqual(["sleep", "5"]);
    }
  });

  it("export traces by the standard OTEL variables with per-pod resource attributes", () => {
    for (const deployment of deployments) {
      const container = deployment.spec!.template.spec!.containers[0]!;
      const attributes = container.env!.find((env) => env.name === "OTEL_RESOURCE_ATTRIBUTES")!;
      expect(attributes.value).toContain("k8s.pod.name=$(POD_NAME)");
      expect(attributes.value).toContain(`k8s.container.name=${componentOf(deployment)}`);
      const names = container.env!.map((env) => env.name);
      expect(names.indexOf("POD_NAME")).toBeLessThan(names.indexOf("OTEL_RESOURCE_ATTRIBUTES"));
    }
    const settings = ofKind<IConfigMap>(objects, "ConfigMap").map((configMap) => configMap.data!);
    for (const data of settings) {
      expect(data.OTEL_SERVICE_NAME).toBeTruthy();
      expect(data.OTEL_TRACES_SAMPLER).toBe("parentbased_traceidratio");
      expect(data.ADMIN_PORT).toBe("9090");
    }
  });
});

describe("readiness probes with gRPC TLS on", () => {
  it("are HTTP /readyz in ci/production-values.yaml, which turns grpcTls on", () => {
    const production = valuesMatrix.find(({ name }) => name === "ci/production-values.yaml")!;
    const objects = renderObjects({ valuesFiles: production.files });
    const deployments = ofKind<IDeployment>(objects, "Deployment");
    expect(deployments.length).toBeGreaterThan(0);
    for (const deployment of deployments) {
      const container = deployment.spec!.template.spec!.containers[0]!;
      expect(container.env!.some((env) => env.name === "INTERNAL_SECRET")).toBe(true);
      expect(container.readinessProbe?.httpGet, container.name).toEqual({
        path: "/readyz",
        port: "admin",
      });
    }
  });

  it("refuse a gRPC readiness probe, which cannot speak TLS", () => {
    expect(() =>
      renderChart({
        set: ["grpcTls.enabled=true", "components.default.probes.readiness.type=grpc"],
      }),
    ).toThrow(/a grpc probe cannot speak TLS/);
  });
});
