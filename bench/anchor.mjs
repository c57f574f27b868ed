/**
 * The monolith anchor: one express process giving the floor request the same guarantees without
 * the mesh. The project's own (`bench/monolith-anchor`, this workspace's dependencies) unless
 * ANCHOR_DIR names another with the same command line (e.g. ../shared/bench/monolith-anchor).
 * `npm run bench:compare` runs its load; `npm run bench:idle` rests it beside the platform.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ownAnchorDir = fileURLToPath(new URL("./monolith-anchor/", import.meta.url));

/**
 * The folder to run `monolith-anchor.mjs` in: the project's own, or a working copy of the
 * anchor in `anchorDir` with its dependencies installed (such a folder may be read-only).
 */
export function anchorCopy(anchorDir = process.env.ANCHOR_DIR ?? ownAnchorDir) {
  if (anchorDir === ownAnchorDir) return ownAnchorDir;
  const dir = join(os.tmpdir(), "switchboard-monolith-anchor");
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(anchorDir, "monolith-anchor.mjs"), join(dir, "monolith-anchor.mjs"));
  copyFileSync(join(anchorDir, "package.json"), join(dir, "package.json"));
  if (!existsSync(join(dir, "node_modules"))) {
    execFileSync("npm", ["install", "--no-audit", "--no-fund"], { cwd: dir, stdio: "inherit" });
  }
  return dir;
}
