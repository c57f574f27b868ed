// CPU profile of every node process of a benchmark, the mesh's children included: given as
// NODE_OPTIONS="--import ./bench/profile-preload.mjs" with BENCH_PROFILE_DIR set (NODE_OPTIONS
// reaches every child; `--cpu-prof` is not allowed there). Profiling starts BENCH_PROFILE_AFTER_MS
// (default 0) after the process starts, so module loading can be left out, and the profile is
// written when the process exits: <dir>/<component>-<pid>.cpuprofile, the component read from
// the entry's path (services/call-control/dist/… → call-control). `node bench/profile-summary.mjs
// <dir>` says where each process's time went.
import { Session } from "node:inspector";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.env.BENCH_PROFILE_DIR;
if (dir) {
  const entry = process.argv[1] ?? "node";
  const component =
    /\/(?:services\/)?([^/]+)\/dist\//.exec(entry)?.[1] ??
    entry
      .split("/")
      .pop()
      ?.replace(/\.[cm]?js$/, "") ??
    "node";
  const session = new Session();
  session.connect();
  let started = false;
  const start = () => {
    session.post("Profiler.enable", () =>
      session.post("Profiler.start", () => {
        started = true;
      }),
    );
  };
  const after = Number(process.env.BENCH_PROFILE_AFTER_MS ?? 0);
  if (after > 0) setTimeout(start, after).unref();
  else start();
  // A session on the process's own thread answers synchronously, so this works in "exit".
  process.on("exit", () => {
    if (!started) return;
    session.post("Profiler.stop", (error, result) => {
      if (error) return;
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        join(dir, `${component}-${process.pid}.cpuprofile`),
        JSON.stringify(result.profile),
      );
    });
  });
}
