#!/usr/bin/env node
// The CommonJS build of the SDK, beside tsc's ES module build in dist/: each source file
// transpiled by TypeScript to CommonJS in dist/cjs/ (TypeScript's interop takes openapi-fetch's
// `exports.default` as its default export), with tsc's declarations copied next to them, where
// dist/cjs/package.json makes both CommonJS for `require` consumers.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const root = dirname(fileURLToPath(import.meta.url));
const src = join(root, "src");
const dist = join(root, "dist");
const cjs = join(dist, "cjs");
mkdirSync(cjs, { recursive: true });
for (const file of readdirSync(src).filter((name) => name.endsWith(".ts"))) {
  const { outputText } = ts.transpileModule(readFileSync(join(src, file), "utf8"), {
    fileName: file,
    compilerOptions: {
      module: ts.ModuleKind.CommonJS,
      target: ts.ScriptTarget.ES2022,
      esModuleInterop: true,
    },
  });
  writeFileSync(join(cjs, file.replace(/\.ts$/, ".js")), outputText);
}
writeFileSync(join(cjs, "package.json"), `${JSON.stringify({ type: "commonjs" }, null, 2)}\n`);
for (const file of readdirSync(dist).filter((name) => name.endsWith(".d.ts"))) {
  // Without their source maps: those point at dist/, where the ESM declarations have theirs.
  const text = readFileSync(join(dist, file), "utf8").replace(
    /\n\/\/# sourceMappingURL=.*\n?$/,
    "\n",
  );
  writeFileSync(join(cjs, file), text);
}
