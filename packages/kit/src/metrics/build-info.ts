import { readFileSync } from "node:fs";
import { Gauge } from "prom-client";
import { metricsRegistry } from "./registry.js";

const buildInfo = new Gauge({
  name: "switchboard_build_info",
  help: "Always 1: the components this process runs and their version",
  labelNames: ["component", "version"] as const,
  registers: [metricsRegistry],
});

/** The release version (the kit's package version; every workspace shares it). */
export const switchboardVersion: string = (() => {
  try {
    const url = new URL("../../package.json", import.meta.url);
    return (JSON.parse(readFileSync(url, "utf8")) as { version?: string }).version ?? "unknown";
  } catch {
    return "unknown";
  }
})();

/** Marks `component` (gateway, inventory, …, or embedded) as running in this process. */
export function recordBuildInfo(component: string, version = switchboardVersion): void {
  buildInfo.set({ component, version }, 1);
}
