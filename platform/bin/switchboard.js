#!/usr/bin/env node
// The `switchboard` command (npx switchboard …); the code lives in ../dist after `npm install`.
await import("../dist/cli.js");
