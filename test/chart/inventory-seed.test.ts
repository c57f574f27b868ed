import { describe, expect, it } from "vitest";
import type { IJob } from "kubernetes-models/batch/v1";
import type { INetworkPolicy } from "kubernetes-models/networking.k8s.io/v1";
import { ofKind, renderObjects } from "./support/render.js";

const seedObjects = (set: string[] = []) =>
  renderObjects({ set: ["inventorySeed.enabled=true", ...set] }).filter(
    (object) => object.metadata.labels?.["app.kubernetes.io/component"] === "inventory-seed",
  );

describe("the inventory seed Job", () => {
  it("is off by default", () => {
    expect(ofKind<IJob>(renderObjects(), "Job")).toEqual([]);
  });

  it("runs seed-cli.js once after install and upgrade, as a hardened pod with DATABASE_URL alone", () => {
    const [job] = ofKind<IJob>(seedObjects(), "Job");
    expect(job!.metadata.annotations).toMatchObject({
      "helm.sh/hook": "post-install,post-upgrade",
      "helm.sh/hook-delete-policy": "before-hook-creation",
    });
    const pod = job!.spec!.template.spec!;
    expect(pod.restartPolicy).toBe("Never");
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.securityContext?.runAsNonRoot).toBe(true);
    const container = pod.containers[0]!;
    expect(container.args).toEqual([
      "services/inventory/dist/seed-cli.js",
      "--count",
      "3000",
      "--seed",
      "1",
    ]);
    expect(container.securityContext?.readOnlyRootFilesystem).toBe(true);
    expect(container.env).toEqual([
      {
        name: "DATABASE_URL",
        valueFrom: { secretKeyRef: { name: "switchboard-postgres", key: "url" } },
      },
    ]);
  });

  it("imports a carrier's CSV from a ConfigMap when one is named", () => {
    const [job] = ofKind<IJob>(seedObjects(["inventorySeed.csv.configMap=carrier-numbers"]), "Job");
    const pod = job!.spec!.template.spec!;
    expect(pod.containers[0]!.args).toEqual([
      "services/inventory/dist/seed-cli.js",
      "--csv",
      "/etc/switchboard/inventory/numbers.csv",
    ]);
    expect(pod.volumes).toContainEqual({
      name: "numbers",
      configMap: { name: "carrier-numbers" },
    });
  });

  it("may reach DNS and PostgreSQL only (the release's default deny covers it)", () => {
    const [policy] = ofKind<INetworkPolicy>(seedObjects(), "NetworkPolicy");
    expect(policy!.spec!.ingress).toEqual([]);
    const ports = policy!.spec!.egress!.flatMap((rule) => rule.ports!.map((port) => port.port));
    expect(ports.sort()).toEqual([53, 53, 5432]);
    expect(policy!.spec!.podSelector.matchLabels).toMatchObject({
      "app.kubernetes.io/instance": "switchboard",
      "app.kubernetes.io/component": "inventory-seed",
    });
  });
});
