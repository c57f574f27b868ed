import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { IDeployment } from "kubernetes-models/apps/v1";
import type { IHorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2";
import { runTool } from "../../scripts/helm.mjs";
import { chartReadme } from "../../scripts/helm-readme.mjs";
import { writeBase } from "../../scripts/helm-render.mjs";
import { ofKind, parseObjects } from "./support/render.js";
import { validateObject } from "./support/validate-object.js";

const root = join(import.meta.dirname, "..", "..");
const base = join(root, "k8s", "base");
const scratch = mkdtempSync(join(tmpdir(), "switchboard-k8s-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const kustomize = (dir: string) => {
  const { status, stdout, stderr } = runTool(["kustomize", dir], { tool: "kubectl" });
  expect(stderr).toBe("");
  expect(status).toBe(0);
  return parseObjects(stdout);
};

describe("k8s/ manifests", () => {
  it("k8s/base is exactly what the chart renders now (run `npm run chart:render`)", () => {
    const fresh = writeBase(scratch);
    expect(readdirSync(base).sort()).toEqual(fresh);
    for (const file of fresh) {
      expect(readFileSync(join(base, file), "utf8"), file).toBe(
        readFileSync(join(scratch, file), "utf8"),
      );
    }
  });

  it("the base builds with kustomize into the objects it lists, each valid", () => {
    const objects = kustomize(base);
    expect(objects.length).toBe(readdirSync(base).length - 1);
    for (const object of objects) validateObject(object);
  });

  it("the example overlay builds and changes namespace, image and messaging's scale", () => {
    const objects = kustomize(join(root, "k8s", "overlays", "example"));
    for (const object of objects) {
      validateObject(object);
      expect(object.metadata.namespace, object.metadata.name).toBe("switchboard-example");
    }
    for (const deployment of ofKind<IDeployment>(objects, "Deployment")) {
      expect(deployment.spec!.template.spec!.containers[0]!.image).toBe(
        "registry.example.com/switchboard:0.1.0",
      );
    }
    const messaging = ofKind<IHorizontalPodAutoscaler>(objects, "HorizontalPodAutoscaler").find(
      (hpa) => hpa.metadata.name === "switchboard-messaging",
    )!;
    expect(messaging.spec).toMatchObject({ minReplicas: 3, maxReplicas: 10 });
  });

  it("the chart README lists every value (run `npm run chart:render`)", () => {
    const readme = join(root, "charts", "switchboard", "README.md");
    expect(readFileSync(readme, "utf8")).toBe(chartReadme());
  });
});
