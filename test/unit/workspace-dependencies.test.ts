import { readdirSync, readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = new URL("../..", import.meta.url).pathname;

interface Manifest {
  name?: string;
  workspaces?: string[];
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const manifest = (dir: string): Manifest =>
  JSON.parse(readFileSync(join(root, dir, "package.json"), "utf8")) as Manifest;

const workspaces = manifest(".").workspaces ?? [];

/** Directories a workspace's own files never live in (another workspace's, or built ones). */
const skipped = new Set(["node_modules", "dist", ".switchboard", ".git", "coverage"]);

function* sourceFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
    const path = dir === "." ? entry.name : `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (skipped.has(entry.name) || workspaces.includes(path)) continue;
      yield* sourceFiles(path);
    } else if (/\.(ts|mts|mjs|js|cjs)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) {
      yield path;
    }
  }
}

const importPattern =
  /(?:^|[^.\w])(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/gm;

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`), or undefined. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith(".") || specifier.startsWith("/") || specifier.startsWith("node:")) {
    return undefined;
  }
  const parts = specifier.split("/");
  const name = specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!;
  return builtinModules.includes(name) ? undefined : name;
}

/**
 * What a workspace's files import, by package: `runtime` when a file that ships (src/, bin/, or
 * any file of the bench) imports it, else only tests and tooling do. The test package ships
 * nothing: everything it imports is for tests.
 */
function importsOf(dir: string): Map<string, "runtime" | "dev"> {
  const imports = new Map<string, "runtime" | "dev">();
  for (const file of sourceFiles(dir)) {
    const inside = relative(dir, file);
    const runtime = dir === "bench" || (dir !== "." && /^(src|bin)\//.test(inside));
    for (const match of readFileSync(join(root, file), "utf8").matchAll(importPattern)) {
      const name = packageOf(match[1] ?? match[2]!);
      if (!name) continue;
      if (runtime || !imports.has(name)) imports.set(name, runtime ? "runtime" : "dev");
    }
  }
  return imports;
}

describe("every workspace declares the packages it imports", () => {
  it.each([".", ...workspaces])("%s", (dir) => {
    const declared = manifest(dir);
    const runtimeDeclared = { ...declared.dependencies, ...declared.peerDependencies };
    const undeclared: string[] = [];
    const devOnly: string[] = [];
    for (const [name, use] of importsOf(dir)) {
      if (name === declared.name) continue;
      if (use === "runtime" && !runtimeDeclared[name]) {
        (declared.devDependencies?.[name] ? devOnly : undeclared).push(name);
      } else if (!runtimeDeclared[name] && !declared.devDependencies?.[name]) {
        undeclared.push(name);
      }
    }
    expect({ undeclared, devOnly }).toEqual({ undeclared: [], devOnly: [] });
  });
});
