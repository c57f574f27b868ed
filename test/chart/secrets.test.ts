import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { IDeployment } from "kubernetes-models/apps/v1";
import type { IConfigMap } from "kubernetes-models/v1";
import { chartDir, ofKind, renderObjects, valuesMatrix } from "./support/render.js";

const secretVariables = [
  "DATABASE_URL",
  "REDIS_URL",
  "SIGNING_KEY_SECRET",
  "INTERNAL_SECRET",
  "BOOTSTRAP_CLIENT_ID",
  "BOOTSTRAP_CLIENT_SECRET",
  "SMPP_PASSWORD",
  "SIP_TRUNK_PASSWORD",
];

/** Every [path, value] of a parsed YAML tree's scalars. */
function* leaves(value: unknown, path = ""): Generator<[string, unknown]> {
  if (value !== null && typeof value === "object") {
    for (const [key, child] of Object.entries(value)) yield* leaves(child, `${path}.${key}`);
  } else {
    yield [path, value];
  }
}

describe("secrets stay out of the chart", () => {
  it.each(valuesMatrix)("$name holds no secret value, only Secret names and keys", ({ files }) => {
    const text = readFileSync(files[0] ?? join(chartDir, "values.yaml"), "utf8");
    for (const [path, value] of leaves(parse(text))) {
      if (typeof value !== "string") continue;
      expect(value, path).not.toMatch(/:\/\/[^/\s:@]+:[^/\s@]+@/); // credentials in a URL
      expect(value, path).not.toMatch(/-----BEGIN|^sbt_|^[A-Za-z0-9+/=_-]{32,}$/);
      if (/secret|password|token|(^|\.)url$/i.test(path.split(".").pop()!)) {
        expect(path, `${path} looks like a secret value`).toMatch(
          /^\.secrets\.[A-Z_]+\.(existingSecret|key)$|\.existingSecret$|secretName$|^\.publicUrl$/,
        );
      }
    }
  });

  it.each(valuesMatrix)(
    "rendered with $name: no Secret, secret variables only by reference",
    ({ files }) => {
      const objects = renderObjects({ valuesFiles: files });
      expect(objects.filter((object) => object.kind === "Secret")).toEqual([]);
      for (const configMap of ofKind<IConfigMap>(objects, "ConfigMap")) {
        for (const variable of secretVariables) expect(configMap.data).not.toHaveProperty(variable);
      }
      for (const deployment of ofKind<IDeployment>(objects, "Deployment")) {
        for (const container of deployment.spec!.template.spec!.containers) {
          const env = container.env ?? [];
          for (const variable of env.filter((entry) => secretVariables.includes(entry.name))) {
            expect(variable.value, variable.name).toBeUndefined();
            expect(variable.valueFrom?.secretKeyRef?.name, variable.name).toBeTruthy();
            expect(variable.valueFrom?.secretKeyRef?.key, variable.name).toBeTruthy();
          }
          const names = env.map((entry) => entry.name);
          expect(names, container.name).toContain("DATABASE_URL");
          expect(names, container.name).toContain("REDIS_URL");
        }
      }
    },
  );

  it("give the bootstrap client to the gateway alone, as an optional reference", () => {
    const deployments = ofKind<IDeployment>(renderObjects(), "Deployment");
    for (const deployment of deployments) {
      const env = deployment.spec!.template.spec!.containers[0]!.env!;
      const bootstrap = env.filter((entry) => entry.name.startsWith("BOOTSTRAP_"));
      if (deployment.metadata!.name === "switchboard-gateway") {
        expect(bootstrap.map((entry) => entry.valueFrom?.secretKeyRef)).toEqual([
          { name: "switchboard-bootstrap", key: "client-id", optional: true },
          { name: "switchboard-bootstrap", key: "client-secret", optional: true },
        ]);
      } else {
        expect(bootstrap, deployment.metadata!.name).toEqual([]);
      }
    }
  });
});
