#!/usr/bin/env node
/**
 * `npm run bench:compare`: the project's floor against the monolith anchor, in one run, as
 * ratios (docs/benchmarks.md). The anchor (ANCHOR_DIR, default ../shared/bench/monolith-anchor)
 * is one express process giving the floor request the same guarantees without the mesh; both
 * report cpu-ms per request the same way: the machine's CPU time in the measured window less
 * the load generator's own, per request. Results: bench/results/compare.{json,md}.
 *
 * `--with-messages` adds the cpu-ms per message of bench/results/messages.json (each carrier's
 * whole message life, `npm run bench:messages`) beside the one-process floor POST's cpu-ms per
 * request (goal: at most twice); `--with-messages=run` runs the messages benchmark first.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const anchorDir =
  process.env.ANCHOR_DIR ??
  fileURLToPath(new URL("../../shared/bench/monolith-anchor/", import.meta.url));
const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const withMessages = process.argv.find((arg) => arg.startsWith("--with-messages"));

/**
 * A working copy of the anchor with its dependencies installed. The shipped folder is read-only
 * and its package.json lacks a comma, so the copy's manifest is the shipped one with the commas
 * between members put back.
 */
function anchorCopy() {
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

/** One run of the anchor at a number of connections: its rows, by label. */
function runAnchor(dir, connections) {
  const run = spawnSync(
    process.execPath,
    ["monolith-anchor.mjs", "bench", "-c", String(connections), "-d", String(seconds)],
    { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
  );
  if (run.status !== 0) throw new Error(`the anchor exited ${run.status}`);
  const last = run.stdout.trim().split("\n").at(-1);
  return JSON.parse(last).map((row) => ({ ...row, connections }));
}

/** The project's floor in the topologies users pay for. */
async function runFloor() {
  const run = spawnSync(process.execPath, ["bench/floor-bench.mjs"], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, BENCH_TOPOLOGIES: "mesh,one process", BENCH_SECONDS: String(seconds) },
  });
  if (run.status !== 0) throw new Error(`the floor benchmark exited ${run.status}`);
  return JSON.parse(await readFile(new URL("./results/floor.json", import.meta.url), "utf8"));
}

/**
 * Each carrier's cpu-ms per message (bench/results/messages.json) against the floor POST's cpu-ms
 * per request in the same topology (one process) at the same connections.
 */
async function messagesAgainstFloor(floor) {
  if (withMessages === "--with-messages=run") {
    const run = spawnSync(process.execPath, ["bench/messages-bench.mjs"], {
      cwd: root,
      stdio: "inherit",
    });
    if (run.status !== 0) throw new Error(`the messages benchmark exited ${run.status}`);
  }
  const messages = JSON.parse(
    await readFile(new URL("./results/messages.json", import.meta.url), "utf8"),
  );
  if (!messages.carriers) throw new Error("messages.json has no carriers: run bench:messages");
  const { concurrency } = messages.settings;
  const post = floor.results.find(
    (r) =>
      r.topology === "one process" &&
      r.scenario.startsWith("POST") &&
      r.concurrency === concurrency,
  );
  return {
    generated_at: messages.generated_at,
    floor_post: post && { connections: concurrency, cpu_ms_per_request: post.cpu_ms_per_request },
    rows: messages.carriers.map((c) => ({
      carrier: c.carrier,
      accepted_per_second: c.send.accepted_per_second,
      delivered_per_second: c.lifecycle.delivered_per_second,
      cpu_ms_per_message: c.cpu.ms_per_message,
      commits_per_message: c.postgres.commits_per_message,
      cpu_ratio_to_floor_post: post ? ratio(c.cpu.ms_per_message, post.cpu_ms_per_request) : null,
    })),
  };
}

const ratio = (a, b) => (b > 0 ? Math.round((a / b) * 100) / 100 : null);

const dir = anchorCopy();
const anchor = [...runAnchor(dir, 16), ...runAnchor(dir, 32)];
const floor = await runFloor();
const anchorRow = (label, connections) =>
  anchor.find((r) => r.label.startsWith(label) && r.connections === connections);
const comparisons = floor.results.map((row) => {
  const label = row.scenario.startsWith("POST") ? "monolith POST" : "monolith GET";
  const base = anchorRow(label, row.concurrency);
  return {
    topology: row.topology,
    request: row.scenario,
    connections: row.concurrency,
    per_second: row.per_second,
    cpu_ms_per_request: row.cpu_ms_per_request,
    p99_ms: row.latency_ms.p99,
    anchor: base && {
      per_second: base.rps,
      cpu_ms_per_request: base.cpu_ms_per_request,
      p99_ms: base.p99,
    },
    cpu_ratio: base ? ratio(row.cpu_ms_per_request, base.cpu_ms_per_request) : null,
    p99_ratio: base ? ratio(row.latency_ms.p99, base.p99) : null,
  };
});
const report = {
  generated_at: new Date().toISOString(),
  command: "npm run bench:compare",
  measured_seconds: seconds,
  anchor,
  comparisons,
  ...(withMessages ? { messages: await messagesAgainstFloor(floor) } : {}),
  machine: {
    cpu: os.cpus()[0]?.model.trim() ?? "unknown",
    cores: os.cpus().length,
    load_average_at_end: os.loadavg().map((v) => Math.round(v * 100) / 100),
  },
};
await writeFile(
  new URL("./results/compare.json", import.meta.url),
  `${JSON.stringify(report, null, 2)}\n`,
);
await writeFile(new URL("./results/compare.md", import.meta.url), markdown(report));
console.log(markdown(report));

function markdown(r) {
  const anchorRows = r.anchor.map(
    (a) =>
      `| anchor | ${a.label} | ${a.connections} | ${a.rps} | ${a.cpu_ms_per_request} | ${a.p99} | | |`,
  );
  const rows = r.comparisons.map(
    (c) =>
      `| ${c.topology} | ${c.request} | ${c.connections} | ${c.per_second} | ${c.cpu_ms_per_request} | ${c.p99_ms} | **${c.cpu_ratio ?? "—"}** | ${c.p99_ratio ?? "—"} |`,
  );
  return `# Cost per request: the project's floor against the monolith anchor

Generated ${r.generated_at} by \`${r.command}\`, everything in one run on this machine (${r.machine.cores} cores, ${r.machine.cpu}; load average at the end ${r.machine.load_average_at_end.join(", ")}), ${r.measured_seconds} s measured per row. cpu-ms per request: the machine's CPU time in the measured window (every process: server, PostgreSQL, Redis) less the load generator's own, per request. The ratios divide the project's row by the anchor's row for the same request and connections (goals: cpu ratio ≤ 1 for the mesh; p99 ratio ≤ 2 for POST at 16 connections).

| topology | request | connections | per second | cpu-ms per request | p99 ms | cpu ratio | p99 ratio |
|---|---|---:|---:|---:|---:|---:|---:|
${[...anchorRows, ...rows].join("\n")}
${r.messages ? messagesMarkdown(r.messages) : ""}`;
}

function messagesMarkdown(m) {
  const rows = m.rows.map(
    (x) =>
      `| ${x.carrier} | ${x.accepted_per_second} | ${x.delivered_per_second} | ${x.cpu_ms_per_message} | ${x.commits_per_message} | **${x.cpu_ratio_to_floor_post ?? "—"}** |`,
  );
  return `
## A message's whole life against the floor POST

From \`bench/results/messages.json\` (generated ${m.generated_at} by \`npm run bench:messages\`, every component in one process, ${m.floor_post?.connections ?? "?"} connections): cpu-ms per message over its whole life (accepted through the gateway, dispatched, submitted, receipted as delivered; the test SMSC's process left out), divided by the cpu-ms per request of this run's one-process floor POST at the same connections (${m.floor_post?.cpu_ms_per_request ?? "not measured"}). Goal: a message costs at most twice the floor POST.

| carrier | accepted/s | delivered/s | cpu-ms per message | commits per message | ratio to the floor POST |
|---|---:|---:|---:|---:|---:|
${rows.join("\n")}
`;
}
