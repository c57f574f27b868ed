/**
 * The monolith anchor (ANCHOR_DIR, default ../shared/bench/monolith-anchor): one express process
 * giving the floor request the same guarantees without the mesh. `npm run bench:compare` runs its
 * load; `npm run bench:idle` rests it beside the platform.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const anchorDir =
  process.env.ANCHOR_DIR ??
  fileURLToPath(new URL("../../shared/bench/monolith-anchor/", import.meta.url));

/**
 * A working copy of the anchor with its dependencies installed. The shipped folder is read-only
 * and its package.json lacks a comma, so the copy's manifest is the shipped one with the commas
 * between members put back.
 */
export function anchorCopy() {
  const dir = join(os.tmpdir(), "switchboard-monolith-anchor");
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(anchorDir, "monolith-anchor.mjs"), join(dir, "monolith-anchor.mjs"));
  const manifest = readFileSync(join(anchorDir, "package.json"), "utf8").replace(
    /"\s*\n(\s*")/g,
    '",\n$1',
  );
  writeFileSync(join(dir, "package.json"), JSON.stringify(JSON.parse(manifest), null, 2));
  if (!existsSync(join(dir, "node_modules"))) {
    execFileSync("npm", ["install", "--no-audit", "--no-fund"], { cwd: dir, stdio: "inherit" });
  }
  return dir;
}
