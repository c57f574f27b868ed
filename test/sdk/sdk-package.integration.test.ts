import { execFile } from "node:child_process";
import { createHmac } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import vm from "node:vm";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPlatform, type TestPlatform } from "@switchboard/test-support/platform";

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL("../..", import.meta.url));
const sdkDir = join(repoRoot, "packages", "sdk");
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
}

/** The installed copy of `name` that a require from `from` would find (walking up node_modules). */
function installedDir(name: string, from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return candidate;
    if (dirname(dir) === dir) throw new Error(`${name} is not installed above ${from}`);
  }
}

/** The SDK's runtime dependencies, transitively: the installed directory of each. */
async function dependencyClosure(dir: string, found = new Map<string, string>()) {
  const manifest = JSON.parse(await readFile(join(dir, "package.json"), "utf8")) as Manifest;
  for (const name of Object.keys(manifest.dependencies ?? {})) {
    if (found.has(name)) continue;
    const installed = installedDir(name, dir);
    found.set(name, installed);
    await dependencyClosure(installed, found);
  }
  return found;
}

/**
 * `npm pack` of a directory into `destination`; the tarball's path. The SDK's own pack runs its
 * prepack (the build); an installed dependency is packed as it is, without its scripts.
 */
async function pack(dir: string, destination: string, scripts = false): Promise<string> {
  const args = ["pack", "--json", "--pack-destination", destination];
  const { stdout } = await run("npm", scripts ? args : [...args, "--ignore-scripts"], {
    cwd: dir,
    maxBuffer: 16 * 1024 * 1024,
  });
  const [result] = JSON.parse(stdout.slice(stdout.indexOf("["))) as { filename: string }[];
  return join(destination, result!.filename);
}

const esmConsumer = `import { createSwitchboard } from "@switchboard/sdk";

declare const process: { env: Record<string, string | undefined> };

// A baseUrl ending in /v1, as people paste it: the SDK drops it (paths carry /v1).
const sb = createSwitchboard({
  baseUrl: \`\${process.env.SB_URL}/v1\`,
  clientId: process.env.SB_CLIENT_ID!,
  clientSecret: process.env.SB_CLIENT_SECRET!,
});
const token: string = await sb.token();
const page = await sb.numbers.search({ limit: 2 });
const hold = await sb.numbers.hold({ number: page.data[0]!.number });
const paged: string[] = [];
for await (const found of sb.numbers.search({ limit: 1 })) {
  paged.push(found.number);
  if (paged.length === 3) break;
}
console.log(JSON.stringify({ token: token.length > 0, number: hold.number, status: hold.status, paged }));
`;

const cjsConsumer = `import { createSwitchboard, SwitchboardProblem } from "@switchboard/sdk";

declare const process: { env: Record<string, string | undefined>; exitCode?: number };

async function main(): Promise<void> {
  const options = { baseUrl: process.env.SB_URL!, clientId: process.env.SB_CLIENT_ID! };
  const refused = await createSwitchboard({ ...options, clientSecret: "not-the-secret" })
    .token()
    .catch((error: unknown) => error);
  if (!(refused instanceof SwitchboardProblem)) throw new Error(\`not a problem: \${String(refused)}\`);
  const sb = createSwitchboard({ ...options, clientSecret: process.env.SB_CLIENT_SECRET! });
  const page = await sb.numbers.search({ limit: 2 });
  const hold = await sb.numbers.hold({ number: page.data[1]!.number });
  console.log(
    JSON.stringify({ refused: refused.kind, printed: String(refused), number: hold.number, status: hold.status }),
  );
}
main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
`;

const browserEntry = `export { createSwitchboard, verifyWebhook, WebhookVerificationError } from "@switchboard/sdk";\n`;

/**
 * The SDK as a stranger gets it: `npm pack` (its prepack builds dist), the tarball installed
 * into a fresh project outside the workspace with only the SDK's declared runtime dependencies
 * (packed from their installed copies, so the test needs no registry), then an ES module and a
 * CommonJS consumer, both type-checked by tsc against the installed types, run against a live
 * platform; and a browser bundle (esbuild) that imports no node: module and runs with the web
 * platform's globals only.
 */
describe("@switchboard/sdk, packed and installed", () => {
  let p: TestPlatform;
  let work: string;
  let app: string;
  let tarballFiles: string[];

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), "sb-sdk-package-"));
    app = join(work, "app");
    await mkdir(app);
    const [platform, tarballs] = await Promise.all([
      startTestPlatform({ database: "postgres", seed: 30 }),
      (async () => {
        const sdk = await pack(sdkDir, work, true);
        const deps = await dependencyClosure(sdkDir);
        return [sdk, ...(await Promise.all([...deps.values()].map((dir) => pack(dir, work))))];
      })(),
    ]);
    p = platform;
    const { stdout } = await run("tar", ["-tzf", tarballs[0]!]);
    tarballFiles = stdout.split("\n").filter(Boolean);
    await writeFile(
      join(app, "package.json"),
      JSON.stringify({ name: "sdk-consumer", version: "1.0.0", private: true }),
    );
    await run(
      "npm",
      ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", ...tarballs],
      { cwd: app, maxBuffer: 16 * 1024 * 1024 },
    );
    await writeFile(join(app, "esm.mts"), esmConsumer);
    await writeFile(join(app, "cjs.cts"), cjsConsumer);
    await writeFile(join(app, "browser.mjs"), browserEntry);
    await writeFile(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          lib: ["ES2022", "DOM", "DOM.Iterable"],
          types: [],
          strict: true,
          skipLibCheck: false,
        },
        files: ["esm.mts", "cjs.cts"],
      }),
    );
  }, 240_000);

  afterAll(async () => {
    await p?.stop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  const env = () => ({
    ...process.env,
    SB_URL: p.url,
    SB_CLIENT_ID: p.clientId,
    SB_CLIENT_SECRET: p.clientSecret,
  });

  it("ships built ESM, CommonJS and types, its README and license, and no workspace files", async () => {
    for (const file of [
      "package/dist/index.js",
      "package/dist/index.d.ts",
      "package/dist/cjs/index.js",
      "package/dist/cjs/index.d.ts",
      "package/dist/cjs/package.json",
      "package/README.md",
      "package/LICENSE",
    ]) {
      expect(tarballFiles).toContain(file);
    }
    expect(tarballFiles.filter((f) => /tsbuildinfo|build-cjs|tsconfig/.test(f))).toEqual([]);
    const manifest = JSON.parse(
      await readFile(join(app, "node_modules", "@switchboard", "sdk", "package.json"), "utf8"),
    ) as Record<string, unknown>;
    expect(manifest.private).toBeUndefined();
    expect(manifest).toMatchObject({ license: "Apache-2.0", engines: { node: ">=20" } });
    // Where a stranger finds the source, the docs and the issue tracker (npm shows all three).
    expect(manifest).toMatchObject({
      repository: {
        type: "git",
        url: expect.stringMatching(/^git\+https:\/\/.+\.git$/),
        directory: "packages/sdk",
      },
      homepage: expect.stringMatching(/^https:\/\/.+#readme$/),
      bugs: { url: expect.stringMatching(/^https:\/\/.+\/issues$/) },
    });
    // Installed outside the workspace: nothing above the project can supply a module.
    expect(app.startsWith(repoRoot)).toBe(false);
  });

  it("type-checks an ES module and a CommonJS consumer against the installed types", async () => {
    await run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: app }).catch(
      (error: { stdout?: string }) => {
        throw new Error(`tsc failed:\n${error.stdout ?? String(error)}`);
      },
    );
    expect(await readFile(join(app, "cjs.cjs"), "utf8")).toContain('require("@switchboard/sdk")');
    expect(await readFile(join(app, "esm.mjs"), "utf8")).toContain('from "@switchboard/sdk"');
  });

  it("runs the ES module consumer against the platform: token, search, hold, paging", async () => {
    const { stdout } = await run(process.execPath, ["esm.mjs"], { cwd: app, env: env() });
    const result = JSON.parse(stdout) as { number: string; status: string; paged: string[] };
    expect(result).toMatchObject({ token: true, status: "active" });
    expect(result.number).toMatch(/^\+\d+$/);
    expect(new Set(result.paged).size).toBe(3);
  });

  it("runs the CommonJS consumer: a wrong secret is a short SwitchboardProblem, then search and hold", async () => {
    const { stdout } = await run(process.execPath, ["cjs.cjs"], { cwd: app, env: env() });
    const result = JSON.parse(stdout) as { refused: string; printed: string; status: string };
    expect(result).toMatchObject({ refused: "invalid-client", status: "active" });
    expect(result.printed).toBe(
      "SwitchboardProblem: 401 invalid-client: client authentication failed",
    );
  });

  it("bundles for browsers with no node: import, and runs on web globals alone", async () => {
    const bundle = await build({
      absWorkingDir: app,
      entryPoints: ["browser.mjs"],
      bundle: true,
      platform: "browser",
      format: "iife",
      globalName: "Switchboard",
      write: false,
      metafile: true,
      logLevel: "silent",
    });
    const inputs = Object.keys(bundle.metafile.inputs);
    expect(inputs.some((input) => input.includes("@switchboard/sdk/dist/index.js"))).toBe(true);
    const imports = Object.values(bundle.metafile.inputs).flatMap((input) =>
      input.imports.map((i) => i.path),
    );
    expect(imports.filter((path) => path.startsWith("node:"))).toEqual([]);
    const code = bundle.outputFiles[0]!.text;
    expect(code).not.toMatch(/\bnode:|\brequire\(|\bBuffer\b/);

    // An edge runtime's globals, no Node ones (no Buffer, process or require).
    const sandbox = vm.createContext({
      ...Object.fromEntries(
        [
          "fetch",
          "Request",
          "Response",
          "Headers",
          "URL",
          "URLSearchParams",
          "FormData",
          "Blob",
          "AbortController",
          "AbortSignal",
          "ReadableStream",
          "crypto",
          "TextEncoder",
          "TextDecoder",
          "atob",
          "btoa",
          "setTimeout",
          "clearTimeout",
          "queueMicrotask",
          "structuredClone",
          "console",
        ].map((name) => [name, (globalThis as Record<string, unknown>)[name]]),
      ),
    });
    vm.runInContext(code, sandbox);
    const sdk = sandbox.Switchboard as typeof import("@switchboard/sdk");
    const sb = sdk.createSwitchboard({
      baseUrl: p.url,
      clientId: p.clientId,
      clientSecret: p.clientSecret,
    });
    const page = await sb.numbers.search({ limit: 1 });
    expect(page.data).toHaveLength(1);

    const key = Buffer.from("a browser-side secret, 24b");
    const body = JSON.stringify({ type: "number.assigned" });
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = createHmac("sha256", key).update(`msg_1.${timestamp}.${body}`).digest();
    const headers = new Headers({
      "webhook-id": "msg_1",
      "webhook-timestamp": timestamp,
      "webhook-signature": `v1,${signature.toString("base64")}`,
    });
    const secret = `whsec_${key.toString("base64")}`;
    expect(await sdk.verifyWebhook(secret, headers, body)).toEqual({ type: "number.assigned" });
    await expect(sdk.verifyWebhook(secret, headers, `${body} `)).rejects.toThrow(
      /no signature matches/,
    );
  });
});
