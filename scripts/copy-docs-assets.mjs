#!/usr/bin/env node
// Copies the API reference renderer (Redoc's standalone bundle, from the npm package) next to
// the gateway's build, which serves it at /docs/redoc.standalone.js: no CDN, and the image keeps
// the one file after dev dependencies are pruned. Runs as the last step of `npm run build`.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);
const bundle = join(dirname(require.resolve("redoc")), "redoc.standalone.js");
const target = join(root, "gateway", "dist", "docs");
mkdirSync(target, { recursive: true });
// The one asset the bundle fetches from a CDN (the footer's logo) becomes an empty inline image,
// so the page loads nothing from outside the gateway.
const cdnLogo = "https://cdn.redoc.ly/redoc/logo-mini.svg";
const blank = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg'/%3E";
const text = readFileSync(bundle, "utf8");
if (!text.includes(cdnLogo)) throw new Error(`${bundle} no longer names ${cdnLogo}: check it`);
writeFileSync(join(target, "redoc.standalone.js"), text.replaceAll(cdnLogo, blank));
