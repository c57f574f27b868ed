import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

/**
 * What the README tests (test/e2e/readme-*.test.ts) share: the README's shell blocks, the
 * environment on its `npm start` lines, and `npm start` run as a user runs it.
 */

/** The repository's root. */
export const repoRoot = resolve(import.meta.dirname, "../..");

/** The fenced `sh` blocks of the README's section `## <heading>`, in order. */
export function readmeShellBlocks(heading: string): string[] {
  const readme = readFileSync(join(repoRoot, "README.md"), "utf8");
  const section = readme.split(`\n## ${heading}\n`)[1]?.split("\n## ")[0] ?? "";
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
}

/** The `VAR=value` (or `VAR='value'`) pairs on a README line, such as those before `npm start`. */
export function envAssignments(line: string): Record<string, string> {
  return Object.fromEntries(
    [...line.matchAll(/([A-Z_]+)=('[^']*'|\S+)/g)].map((m) => [m[1]!, m[2]!.replace(/^'|'$/g, "")]),
  );
}

export interface ReadmePlatform {
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
}

/**
 * `npm start` as the README runs it (the built platform/dist/embedded.js, in `workDir`, with
 * `env` on top of this process's environment), embedded (PGlite, no Redis) on `port`, its data in
 * `workDir/.switchboard`; resolves once it printed its walkthrough ("Try it:").
 */
export async function startReadmePlatform(options: {
  workDir: string;
  port: number;
  env: Record<string, string>;
}): Promise<ReadmePlatform> {
  let output = "";
  const child = spawn(process.execPath, [join(repoRoot, "platform/dist/embedded.js")], {
    cwd: options.workDir,
    env: {
      ...process.env,
      ...options.env,
      NODE_ENV: "development",
      DATA_DIR: join(options.workDir, ".switchboard"),
      PORT: String(options.port),
      ADMIN_PORT: "0",
      EMBEDDED_SEED_COUNT: "200",
      REDIS_URL: "",
      DATABASE_URL: "",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const started = Date.now();
  while (!output.includes("Try it:")) {
    if (child.exitCode !== null) throw new Error(`npm start exited:\n${output}`);
    if (Date.now() - started > 90_000) {
      child.kill("SIGTERM");
      throw new Error(`npm start hung:\n${output}`);
    }
    await new Promise((done) => setTimeout(done, 100));
  }
  return { child, output: () => output };
}
