import { describe, expect, it } from "vitest";
import { runTool } from "../../scripts/helm.mjs";
import { chartDir, valuesMatrix } from "./support/render.js";

describe("helm lint --strict", () => {
  it.each(valuesMatrix)("passes with $name", ({ files }) => {
    const args = ["lint", "--strict", chartDir, ...files.flatMap((file) => ["--values", file])];
    const { status, stdout, stderr } = runTool(args);
    expect(stderr).not.toMatch(/\[(WARNING|ERROR)\]/);
    expect(stdout).not.toMatch(/\[(WARNING|ERROR)\]/);
    expect(stdout).toContain("1 chart(s) linted, 0 chart(s) failed");
    expect(status).toBe(0);
  });
});
