import { describe, expect, it } from "vitest";
import { runTool } from "../../scripts/helm.mjs";
import { chartDir } from "./support/render.js";

const template = (...set: string[]) =>
  runTool(["template", "switchboard", chartDir, ...set.flatMap((value) => ["--set", value])]);

describe("values.schema.json", () => {
  it.each([
    ["a bogus top-level key", "bogus=1", /additional properties 'bogus' not allowed/],
    ["a misspelt component", "components.messagin.replicas=3", /'messagin' not allowed/],
    ["a bogus key in a component", "components.gateway.replicaCount=3", /'replicaCount'/],
    ["a bogus key in a nested block", "networkPolicy.postgres.cidr=10.0.0.0/8", /'cidr'/],
    ["a secret value instead of a reference", "secrets.DATABASE_URL.value=postgres://x", /'value'/],
    ["a secret variable among plain settings", "env.SIGNING_KEY_SECRET=abc", /SIGNING_KEY_SECRET/],
    ["a non-string setting", "components.usage.env.USAGE_BATCH_SIZE=500", /string/],
    ["an unknown callee", "components.gateway.calls={billing}", /calls\/0': value must be one of/],
    [
      "a bad probe type",
      "components.default.probes.liveness.type=tcp",
      /type': value must be one of/,
    ],
  ])("rejects %s", (_what, assignment, message) => {
    const { status, stderr } = template(assignment);
    expect(status).not.toBe(0);
    expect(stderr).toMatch(/schema/);
    expect(stderr).toMatch(message);
  });

  it("accepts the documented overrides", () => {
    const { status, stderr } = template(
      "components.messaging.autoscaling.maxReplicas=12",
      "components.inventory.autoscaling.enabled=false",
      "components.inventory.replicas=4",
      "telemetry.otlpEndpoint=http://otel-collector.observability:4318",
    );
    expect(stderr).toBe("");
    expect(status).toBe(0);
  });

  it("fails with a clear message when a caller needs a disabled component or an unknown secret", () => {
    const disabled = template("components.inventory.enabled=false");
    expect(disabled.status).not.toBe(0);
    expect(disabled.stderr).toMatch(/calls inventory, which is disabled/);
    const unknown = template("components.usage.secretEnv={DATABASE_URL,MISSING_SECRET}");
    expect(unknown.status).not.toBe(0);
    expect(unknown.stderr).toMatch(/MISSING_SECRET, which is not a key of secrets/);
  });
});
