import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ISecret } from "kubernetes-models/v1";
import { toolPath } from "../../../scripts/helm.mjs";
import { parseObjects, type K8sObject } from "./render.js";

const root = join(import.meta.dirname, "..", "..", "..");

/** The fenced `sh` blocks of a Markdown text, in order. */
export const shellBlocks = (markdown: string): string[] =>
  [...markdown.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);

/**
 * Runs documented install commands through bash, without a cluster: `kubectl … create secret`
 * runs for real with `--dry-run=client -o json` (the Secrets it would create), `helm install`
 * runs as `helm template` with the same arguments (the objects it would create); every other
 * kubectl, and curl, does nothing.
 */
export function runInstallCommands(script: string): { secrets: ISecret[]; objects: K8sObject[] } {
  const out = mkdtempSync(join(tmpdir(), "sb-install-"));
  const stubs = `
set -euo pipefail
n=0
kubectl() {
  case " $* " in
    *" create secret "*) n=$((n + 1)); "$KUBECTL" "$@" --dry-run=client -o json > "$OUT/secret-$n.json" ;;
  esac
}
helm() {
  if [ "$1" = install ]; then shift; "$HELM" template "$@" >> "$OUT/rendered.yaml"; fi
}
curl() { :; }
`;
  execFileSync("bash", ["-c", `${stubs}\n${script}`], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: mkdtempSync(join(tmpdir(), "sb-install-home-")),
      OUT: out,
      KUBECTL: toolPath("kubectl"),
      HELM: toolPath("helm"),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const files = readdirSync(out);
  return {
    secrets: files
      .filter((file) => file.startsWith("secret-"))
      .map((file) => JSON.parse(readFileSync(join(out, file), "utf8")) as ISecret),
    objects: files.includes("rendered.yaml")
      ? parseObjects(readFileSync(join(out, "rendered.yaml"), "utf8"))
      : [],
  };
}
