#!/usr/bin/env node
// Renders the chart into plain manifests: k8s/base/ (one file per object and a kustomization.yaml
// listing them), from charts/switchboard with its default values. `npm run chart:render` writes
// them; test/chart/k8s-drift.test.ts renders into a temporary folder and compares.
//
//   node scripts/helm-render.mjs [outDir]      # default: k8s/base
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { helm } from "./helm.mjs";
import { writeChartReadme } from "./helm-readme.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const chartDir = join(root, "charts", "switchboard");
export const releaseName = "switchboard";

const header =
  "# Rendered from charts/switchboard (default values) by `npm run chart:render`; do not edit.\n";

/** `helm template` of the chart: the multi-document YAML text. */
export function renderChart({ valuesFiles = [], set = [], release = releaseName } = {}) {
  const args = ["template", release, chartDir];
  for (const file of valuesFiles) args.push("--values", file);
  for (const assignment of set) args.push("--set", assignment);
  return helm(args);
}

/** Splits helm's output into { fileName, text } per object, without helm's `# Source:` lines. */
export function splitManifests(rendered) {
  return rendered
    .split(/^---\n/m)
    .map((chunk) => chunk.replace(/^# Source: .*\n/m, "").trim())
    .filter((chunk) => chunk !== "")
    .map((text) => {
      const object = parse(text);
      return {
        fileName: `${object.metadata.name}.${object.kind.toLowerCase()}.yaml`,
        text: `${header}${text}\n`,
      };
    });
}

/** Writes the rendered default values into `outDir` (emptied first); returns the file names. */
export function writeBase(outDir) {
  const files = splitManifests(renderChart()).sort((a, b) => a.fileName.localeCompare(b.fileName));
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  for (const { fileName, text } of files) writeFileSync(join(outDir, fileName), text);
  const kustomization = [
    header.trimEnd(),
    "apiVersion: kustomize.config.k8s.io/v1beta1",
    "kind: Kustomization",
    "resources:",
    ...files.map(({ fileName }) => `  - ${fileName}`),
    "",
  ].join("\n");
  writeFileSync(join(outDir, "kustomization.yaml"), kustomization);
  return readdirSync(outDir).sort();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const outDir = process.argv[2] ?? join(root, "k8s", "base");
  const written = writeBase(outDir);
  writeChartReadme();
  console.log(
    `wrote ${written.length} files to ${outDir} and the values table of ${chartDir}/README.md`,
  );
}
