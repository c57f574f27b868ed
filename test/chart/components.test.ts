import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { backendNames, gatewayComponent } from "@switchboard/gateway";
import { addressVariable, grpcPortVariable } from "@switchboard/kit";
import { serviceComponents } from "@switchboard/platform";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

interface ChartComponent {
  args?: string[];
  port?: number;
  portEnv?: string;
  addressEnv?: string;
  calls?: string[];
}

const values = parse(
  readFileSync(
    fileURLToPath(new URL("../../charts/switchboard/values.yaml", import.meta.url)),
    "utf8",
  ),
) as { components: Record<string, ChartComponent> };

const sorted = (list: readonly string[] | undefined) => [...(list ?? [])].sort();

// The chart is YAML, so it repeats what the component declarations say; this keeps the two equal.
describe("the chart's components match the component declarations", () => {
  it.each(serviceComponents.map((c) => [c.name, c] as const))("%s", (name, component) => {
    const chart = values.components[name];
    expect(chart).toBeDefined();
    expect(chart!.args).toEqual([`services/${name}/dist/main.js`]);
    expect(chart!.port).toBe(component.grpcPort);
    expect(chart!.portEnv).toBe(grpcPortVariable(name));
    expect(chart!.addressEnv).toBe(addressVariable(name));
    expect(sorted(chart!.calls)).toEqual(sorted(component.needs));
  });

  it("gateway", () => {
    const chart = values.components.gateway!;
    expect(chart.args).toEqual(["gateway/dist/main.js"]);
    expect(chart.port).toBe(gatewayComponent.httpPort);
    expect(sorted(chart.calls)).toEqual(sorted(Object.values(backendNames)));
  });

  it("the gateway calls every declared service", () => {
    expect(sorted(Object.values(backendNames))).toEqual(
      sorted(serviceComponents.map((c) => c.name)),
    );
  });
});
