import { accessSync, constants } from "node:fs";
import { delimiter, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

/** CI=true (any value but "false"): there, a suite never skips for want of a tool. */
export const inCi = Boolean(process.env.CI) && process.env.CI !== "false";

/** True when `command` is an executable on PATH (looked up, not run). */
export function hasTool(command: string): boolean {
  return (process.env.PATH ?? "").split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** `a`, `a and b`, `a, b and c`. */
const listed = (names: string[]) =>
  names.length > 1 ? `${names.slice(0, -1).join(", ")} and ${names.at(-1)}` : (names[0] ?? "");

/**
 * For `describe.skipIf(...)`: true when one of `tools` (commands .ci/run installs) is missing
 * and this is not CI, and then says so once, on stderr, naming the suite's file and the tools.
 * In CI it is always false: a missing tool fails the suite there, never skips it.
 */
export function skipWithoutTools(suiteUrl: string, tools: string[]): boolean {
  if (inCi) return false;
  const missing = tools.filter((tool) => !hasTool(tool));
  if (missing.length === 0) return false;
  const file = relative(process.cwd(), fileURLToPath(suiteUrl));
  process.stderr.write(
    `${file}: skipped, ${listed(missing)} not installed (.ci/run installs ${missing.length > 1 ? "them" : "it"}; in CI this suite runs)\n`,
  );
  return true;
}
