// Where each profiled process's time went (bench/profile-preload.mjs wrote the profiles):
// `node bench/profile-summary.mjs <dir> [top]` prints, per process, its busy ms (idle left out)
// and the shares of that busy time by owner — a workspace package, an npm package, socket
// writes, garbage collection (bench/src/call-control/cpu-profile.ts) — busiest process first.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { cpuShares } from "./dist/call-control/cpu-profile.js";

const [dir, topArg] = process.argv.slice(2);
if (!dir) {
  console.error("usage: node bench/profile-summary.mjs <dir> [top]");
  process.exit(2);
}
const top = Number(topArg ?? 10);
const processes = readdirSync(dir)
  .filter((file) => file.endsWith(".cpuprofile"))
  .map((file) => {
    const shares = cpuShares(JSON.parse(readFileSync(join(dir, file), "utf8")), 100);
    const busy = shares.filter((share) => share.owner !== "(idle)");
    const busyMs = busy.reduce((sum, share) => sum + share.ms, 0);
    return { file, busyMs, busy };
  })
  .sort((a, b) => b.busyMs - a.busyMs);
const allBusy = processes.reduce((sum, p) => sum + p.busyMs, 0);
for (const { file, busyMs, busy } of processes) {
  const ofAll = allBusy ? Math.round((busyMs / allBusy) * 100) : 0;
  console.log(`${file}: ${busyMs} ms busy (${ofAll} % of the node processes' busy time)`);
  for (const share of busy.slice(0, top)) {
    const percent = busyMs ? Math.round((share.ms / busyMs) * 1000) / 10 : 0;
    console.log(`  ${String(percent).padStart(5)} %  ${share.owner}`);
  }
}
