import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { IDeployment } from "kubernetes-models/apps/v1";
import { runInstallCommands, shellBlocks } from "./support/install-blocks.js";
import { ofKind } from "./support/render.js";

const root = join(import.meta.dirname, "..", "..");
const read = (path: string) => readFileSync(join(root, path), "utf8");

/** The install as each document gives it: the Secrets' block and the `helm install` block. */
const installs = [
  {
    name: "docs/operations.md (Deploy to Kubernetes, steps 2 and 3)",
    script: () => {
      const section = read("docs/operations.md").split("\n## Deploy to Kubernetes\n")[1]!;
      const steps = section
        .split("**2. Create the Secrets**")[1]!
        .split("**Scale one service.**")[0]!;
      return shellBlocks(steps).join("\n");
    },
  },
  {
    name: "charts/switchboard/README.md (its first block)",
    script: () => shellBlocks(read("charts/switchboard/README.md"))[0]!,
  },
];

describe.each(installs)("the install of $name", ({ script }) => {
  const { secrets, objects } = runInstallCommands(script());

  it("creates every Secret key a pod requires, so no pod waits in CreateContainerConfigError", () => {
    const deployments = ofKind<IDeployment>(objects, "Deployment");
    expect(deployments.length).toBeGreaterThan(0);
    const created = new Map(
      secrets.map((secret) => [secret.metadata!.name!, Object.keys(secret.data ?? {})]),
    );
    for (const deployment of deployments) {
      for (const container of deployment.spec!.template.spec!.containers) {
        for (const variable of container.env ?? []) {
          const ref = variable.valueFrom?.secretKeyRef;
          if (!ref || ref.optional) continue;
          expect(created.get(ref.name!), `${container.name} ${variable.name}`).toContain(ref.key);
        }
      }
    }
  });

  it("gives both keys at least the 32 characters the processes require", () => {
    const keys = secrets.find((secret) => secret.metadata!.name === "switchboard-keys")!;
    for (const key of ["signing-key-secret", "internal-secret"]) {
      const value = Buffer.from(keys.data![key]!, "base64").toString("utf8");
      expect(value.length, key).toBeGreaterThanOrEqual(32);
    }
    const [signing, internal] = ["signing-key-secret", "internal-secret"].map(
      (key) => keys.data![key],
    );
    expect(signing).not.toBe(internal);
  });
});

it("the chart README's secrets table lists every variable a pod takes from a Secret", () => {
  const readme = read("charts/switchboard/README.md");
  const table = readme.split("## Secrets, by reference only")[1]!.split("\n## ")[0]!;
  const { objects } = runInstallCommands(
    "helm install switchboard charts/switchboard --set ingress.host=api.example.com",
  );
  const variables = new Set(
    ofKind<IDeployment>(objects, "Deployment").flatMap((deployment) =>
      deployment
        .spec!.template.spec!.containers.flatMap((container) => container.env ?? [])
        .filter((variable) => variable.valueFrom?.secretKeyRef)
        .map((variable) => variable.name),
    ),
  );
  expect(variables.size).toBeGreaterThan(0);
  for (const variable of variables) expect(table, variable).toContain(`\`${variable}\``);
});
