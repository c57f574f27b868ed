import { describe, expect, it } from "vitest";
import { Deployment } from "kubernetes-models/apps/v1";
import { componentOf, renderObjects, valuesMatrix } from "./support/render.js";
import { validateObject } from "./support/validate-object.js";

const perComponent = ["ConfigMap", "Deployment", "Service", "ServiceAccount"];

describe("helm template validates against the Kubernetes schemas", () => {
  it.each(valuesMatrix)("every object rendered with $name validates", ({ files }) => {
    const objects = renderObjects({ valuesFiles: files });
    expect(objects.length).toBeGreaterThan(20);
    for (const object of objects) expect(() => validateObject(object)).not.toThrow();

    const names = objects.map((object) => `${object.kind}/${object.metadata.name}`);
    expect(new Set(names).size).toBe(names.length);
    for (const object of objects) {
      expect(object.metadata.name.length).toBeLessThanOrEqual(63);
      expect(object.metadata.namespace).toBeUndefined();
    }
    // Every component has the generic set of objects.
    const components = new Set(objects.map(componentOf).filter(Boolean));
    for (const component of components) {
      const kinds = objects.filter((o) => componentOf(o) === component).map((o) => o.kind);
      for (const kind of perComponent) expect(kinds, `${component}`).toContain(kind);
    }
  });

  it("renders the full set for the default values", () => {
    const objects = renderObjects();
    const count = (kind: string) => objects.filter((object) => object.kind === kind).length;
    const components = ["call-control", "gateway", "inventory", "messaging", "usage", "webhook"];
    expect([...new Set(objects.map(componentOf).filter(Boolean))].sort()).toEqual(components);
    for (const kind of [...perComponent, "HorizontalPodAutoscaler", "PodDisruptionBudget"]) {
      expect(count(kind), kind).toBe(6);
    }
    expect(count("NetworkPolicy")).toBe(7);
    expect(count("Ingress")).toBe(1);
    expect(count("ServiceMonitor")).toBe(0);
  });

  it("the validation rejects a malformed object (the check has teeth)", () => {
    const broken = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "x" } };
    const withSpec = { ...broken, spec: { replicas: "two", selector: {}, template: {} } };
    expect(() => validateObject(withSpec as never)).toThrow(/replicas/);
    expect(() => new Deployment(withSpec as never).validate()).toThrow();
    expect(() => validateObject({ ...broken, kind: "Pod" } as never)).toThrow(/no schema model/);
  });
});
