#!/usr/bin/env node
/**
 * `npm run bench:compare`: the monolith anchor, the project's floor, calls and messages in one
 * run, and one table of ratios (docs/benchmarks.md). The anchor (bench/monolith-anchor, or
 * ANCHOR_DIR) is one express process giving the floor request the same
 * guarantees without the mesh; every row reports cpu-ms the same way: the machine's CPU time in
 * the measured window less the load generator's own, per request — for a call and a message over
 * its whole life. The goals are ratios of rows of the same run: the floor in the mesh against
 * the anchor (≤ 1), a call placed and a message against the floor POST in one process at the
 * same connections (≤ 2). Results: bench/results/compare.{json,md}.
 *
 * Knobs: BENCH_SECONDS (each anchor and floor row, default 8), BENCH_COMPARE_WITH (the
 * whole-life benchmarks run after the floor, default "calls,messages"; empty for none),
 * BENCH_CALLS_SECONDS (the calls' measured window, default 20), the calls benchmark's
 * BENCH_CALL_CARRIERS (default "sandbox,sip": a row each) and the messages benchmark's own
 * (BENCH_CARRIERS, BENCH_REQUESTS, …).
 */
import { spawnSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { anchorCopy } from "./anchor.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const callsSeconds = Number(process.env.BENCH_CALLS_SECONDS ?? 20);
const wholeLife = (process.env.BENCH_COMPARE_WITH ?? "calls,messages")
  .split(",")
  .map((name) => name.trim())
  .filter(Boolean);

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

/** Runs one benchmark of this workspace (`node <script> …args`) and reads the JSON it wrote. */
async function runBenchmark(script, args, results, env = {}) {
  const run = spawnSync(process.execPath, [script, ...args], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, ...env },
  });
  if (run.status !== 0) throw new Error(`${script} exited ${run.status}`);
  return JSON.parse(await readFile(new URL(`./results/${results}`, import.meta.url), "utf8"));
}

const ratio = (a, b) => (b > 0 ? Math.round((a / b) * 100) / 100 : null);

/** A row of the table: a measured request against what the goal compares it with. */
function compared(row, base, goal) {
  const cpuRatio = base ? ratio(row.cpu_ms, base.cpu_ms) : null;
  const p99Ratio = base && goal.p99 ? ratio(row.p99_ms, base.p99_ms) : null;
  const met =
    goal.cpu === undefined || cpuRatio === null
      ? null
      : cpuRatio <= goal.cpu && (p99Ratio === null || p99Ratio <= goal.p99);
  return { ...row, against: base ?? null, cpu_ratio: cpuRatio, p99_ratio: p99Ratio, goal, met };
}

const dir = anchorCopy();
const anchor = [...runAnchor(dir, 16), ...runAnchor(dir, 32)];
const floor = await runBenchmark("bench/floor-bench.mjs", [], "floor.json", {
  BENCH_TOPOLOGIES: "mesh,one process",
  BENCH_SECONDS: String(seconds),
});
const calls = wholeLife.includes("calls")
  ? await runBenchmark(
      "bench/dist/call-control/calls-bench.js",
      ["--seconds", String(callsSeconds)],
      "calls.json",
    )
  : undefined;
const messages = wholeLife.includes("messages")
  ? await runBenchmark("bench/messages-bench.mjs", [], "messages.json")
  : undefined;

const anchorRow = (label, connections) => {
  const a = anchor.find((r) => r.label.startsWith(label) && r.connections === connections);
  return a && { what: `anchor: ${a.label}`, cpu_ms: a.cpu_ms_per_request, p99_ms: a.p99 };
};
/** The floor POST in one process at a number of connections: what a call and a message may cost twice of. */
const floorPost = (connections) => {
  const f = floor.results.find(
    (r) =>
      r.topology === "one process" &&
      r.scenario.startsWith("POST") &&
      r.concurrency === connections,
  );
  return (
    f && {
      what: `floor: ${f.scenario}, one process`,
      cpu_ms: f.cpu_ms_per_request,
      p99_ms: f.latency_ms.p99,
    }
  );
};
const comparisons = [
  ...floor.results.map((row) => {
    const post = row.scenario.startsWith("POST");
    const mesh = row.topology === "mesh";
    return compared(
      {
        request: row.scenario,
        topology: row.topology,
        connections: row.concurrency,
        per_second: row.per_second,
        cpu_ms: row.cpu_ms_per_request,
        p99_ms: row.latency_ms.p99,
      },
      anchorRow(post ? "monolith POST" : "monolith GET", row.concurrency),
      // Issue 18: the mesh no dearer than the anchor; the POST's p99 at 16 at most twice.
      mesh ? { cpu: 1, ...(post && row.concurrency === 16 ? { p99: 2 } : {}) } : {},
    );
  }),
  ...(calls?.carriers ?? []).map((c) =>
    compared(
      {
        request: `a call placed (POST /v1/api/calls/outbound, ${c.carrier}), whole life`,
        topology: "one process",
        connections: calls.concurrency,
        per_second: c.placed_per_second,
        cpu_ms: c.cpu.ms_per_call,
        p99_ms: c.latency_ms.p99,
      },
      floorPost(calls.concurrency),
      { cpu: 2 },
    ),
  ),
  ...(messages?.carriers ?? []).map((c) =>
    compared(
      {
        request: `a message (POST /v1/api/messages/send, ${c.carrier}), whole life`,
        topology: "one process",
        connections: messages.settings.concurrency,
        per_second: c.send.accepted_per_second,
        cpu_ms: c.cpu.ms_per_message,
        p99_ms: c.send.latency_ms.p99,
      },
      floorPost(messages.settings.concurrency),
      { cpu: 2 },
    ),
  ),
];
const report = {
  generated_at: new Date().toISOString(),
  command: "npm run bench:compare",
  measured_seconds: seconds,
  calls_measured_seconds: calls ? calls.measured_seconds : null,
  messages_settings: messages?.settings ?? null,
  anchor,
  comparisons,
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
  const cell = (value) => value ?? "—";
  const goal = (c) => {
    const parts = [
      c.goal.cpu !== undefined && `cpu ≤ ${c.goal.cpu}`,
      c.goal.p99 !== undefined && `p99 ≤ ${c.goal.p99}`,
    ].filter(Boolean);
    if (parts.length === 0) return "";
    return `${parts.join(", ")}: ${c.met === null ? "—" : c.met ? "met" : "**not met**"}`;
  };
  const rows = r.comparisons.map(
    (c) =>
      `| ${c.request} | ${c.topology} | ${c.connections} | ${c.per_second} | ${c.cpu_ms} | ${c.p99_ms} | ${cell(c.against?.what)} | ${cell(c.against?.cpu_ms)} | ${cell(c.against?.p99_ms)} | **${cell(c.cpu_ratio)}** | ${cell(c.p99_ratio)} | ${goal(c)} |`,
  );
  const anchorRows = r.anchor.map(
    (a) =>
      `| ${a.label} | ${a.connections} | ${a.rps} | ${a.cpu_ms_per_request} | ${a.p50} | ${a.p99} |`,
  );
  return `# Cost per request: the anchor, the floor, calls and messages in one run

Generated ${r.generated_at} by \`${r.command}\`, everything in one run on this machine (${r.machine.cores} cores, ${r.machine.cpu}; load average at the end ${r.machine.load_average_at_end.join(", ")}): the anchor and the floor ${r.measured_seconds} s measured per row${r.calls_measured_seconds ? `, the calls ${r.calls_measured_seconds} s` : ""}${r.messages_settings ? `, the messages ${r.messages_settings.requests} per carrier` : ""}. cpu-ms: the machine's CPU time in the measured window (every process: server, PostgreSQL, Redis) less the load generator's own, per request; for a call and a message, over its whole life (\`bench/results/calls.md\`, \`bench/results/messages.md\`). Each ratio divides the row by the one it is compared with, from this same run: the floor by the anchor's row for the same request and connections, a call and a message by the floor POST in one process (where they run) at the same connections.

| request | topology | connections | per second | cpu-ms | p99 ms | compared with | its cpu-ms | its p99 ms | cpu ratio | p99 ratio | goal |
|---|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|
${rows.join("\n")}

The anchor's own rows:

| anchor | connections | per second | cpu-ms per request | p50 ms | p99 ms |
|---|---:|---:|---:|---:|---:|
${anchorRows.join("\n")}
`;
}
