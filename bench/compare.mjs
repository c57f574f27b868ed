#!/usr/bin/env node
/**
 * `npm run bench:compare`: the monolith anchor, the project's floor, calls and messages, and one
 * table of ratios against issue 31's goals (docs/benchmarks.md). The anchor (bench/monolith-anchor,
 * or ANCHOR_DIR) is one express process giving the floor request the same guarantees without the
 * mesh; every row reports cpu-ms the same way: the machine's CPU time in the measured window less
 * the load generator's own, per request — for a call and a message over its whole life.
 *
 * The goals are ratios of rows of the same round: the floor in the mesh as deployed (telemetry
 * preload on) against the anchor, POST and GET at 16 and 32 connections, cpu ≤ 1.5 and, at 16
 * connections, p99 ≤ 1.5 (the mesh with the preload off is shown beside it, without a goal); a
 * call's whole life against the floor POST in one process at the same connections, cpu ≤ 3
 * (sandbox) and ≤ 3.5 (sip), and at most 15 PostgreSQL round trips per call; a message's whole
 * life, cpu ≤ 3 (each carrier). BENCH_ROUNDS rounds (default 3) run everything that many times,
 * one after the other; the table reports each row's median over the rounds (its figures and its
 * ratios, each ratio taken within its round) and whether the median ratio meets the goal.
 * Results: bench/results/compare.{json,md}.
 *
 * Knobs: BENCH_ROUNDS (default 3), BENCH_SECONDS (each anchor and floor row, default 8),
 * BENCH_COMPARE_WITH (the whole-life benchmarks run after the floor, default "calls,messages";
 * empty for none), BENCH_CALLS_SECONDS (the calls' measured window, default 20), the calls
 * benchmark's BENCH_CALL_CARRIERS (default "sandbox,sip": a row each) and the messages
 * benchmark's own (BENCH_CARRIERS, BENCH_REQUESTS, …).
 */
import { spawnSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { anchorCopy } from "./anchor.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const rounds = Math.max(1, Math.floor(Number(process.env.BENCH_ROUNDS ?? 3)));
const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const callsSeconds = Number(process.env.BENCH_CALLS_SECONDS ?? 20);
const wholeLife = (process.env.BENCH_COMPARE_WITH ?? "calls,messages")
  .split(",")
  .map((name) => name.trim())
  .filter(Boolean);

/** Issue 31's goals, as ratios of one round's rows. */
export const goals = {
  /** The mesh as deployed against the anchor's same request and connections. */
  mesh: { cpu: 1.5, p99AtConnections: 16, p99: 1.5 },
  /** A call's whole life against the floor POST in one process, by voice carrier. */
  call: { sandbox: 3, sip: 3.5 },
  /** A message's whole life against the floor POST in one process, every carrier. */
  message: 3,
  /** PostgreSQL statements per call placed, over its whole life (the calls benchmark counts them). */
  roundTripsPerCall: 15,
};

/** The floor's topologies: one process, and the mesh with the telemetry preload on and off. */
const floorTopologies = "one process,mesh,mesh (telemetry off)";

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

/** A row of one round: a measured request against what its goal compares it with. */
function compared(row, base, goal) {
  const cpuRatio = base ? ratio(row.cpu_ms, base.cpu_ms) : null;
  const p99Ratio = base && goal.p99 ? ratio(row.p99_ms, base.p99_ms) : null;
  return { ...row, against: base ?? null, cpu_ratio: cpuRatio, p99_ratio: p99Ratio, goal };
}

/** Everything once: the anchor, the floor, the calls and the messages, and their comparisons. */
async function oneRound(round) {
  console.log(`bench:compare — round ${round} of ${rounds}`);
  const dir = anchorCopy();
  const anchor = [...runAnchor(dir, 16), ...runAnchor(dir, 32)];
  const floor = await runBenchmark("bench/floor-bench.mjs", [], "floor.json", {
    BENCH_TOPOLOGIES: floorTopologies,
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
    ? await runBenchmark("bench/dist/messaging/messages-bench.js", [], "messages.json")
    : undefined;

  const anchorRow = (label, connections) => {
    const a = anchor.find((r) => r.label.startsWith(label) && r.connections === connections);
    return a && { what: `anchor: ${a.label}`, cpu_ms: a.cpu_ms_per_request, p99_ms: a.p99 };
  };
  /** The floor POST in one process at a number of connections: what a call and a message are set against. */
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
      const p99 = row.concurrency === goals.mesh.p99AtConnections ? { p99: goals.mesh.p99 } : {};
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
        // The goal is the mesh as deployed; the other topologies are shown beside it.
        row.topology === "mesh" ? { cpu: goals.mesh.cpu, ...p99 } : {},
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
          round_trips: c.postgres_round_trips?.per_call ?? null,
        },
        floorPost(calls.concurrency),
        {
          cpu: goals.call[c.carrier] ?? goals.call.sip,
          round_trips: goals.roundTripsPerCall,
        },
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
        { cpu: goals.message },
      ),
    ),
  ];
  return {
    round,
    finished_at: new Date().toISOString(),
    anchor,
    comparisons,
    calls_measured_seconds: calls ? calls.measured_seconds : null,
    messages_settings: messages?.settings ?? null,
    load_average_at_end: loadAverage(),
  };
}

/** The middle value (the mean of the two middle ones for an even count); null when none. */
export function median(values) {
  const known = values.filter((v) => typeof v === "number" && Number.isFinite(v));
  if (known.length === 0) return null;
  const sorted = [...known].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const value = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return Math.round(value * 1000) / 1000;
}

/** Whether a row's medians meet its goal: null when it has none (or nothing to compare). */
function meets(row) {
  const checks = [];
  if (row.goal.cpu !== undefined && row.cpu_ratio !== null)
    checks.push(row.cpu_ratio <= row.goal.cpu);
  if (row.goal.p99 !== undefined && row.p99_ratio !== null)
    checks.push(row.p99_ratio <= row.goal.p99);
  if (row.goal.round_trips !== undefined && row.round_trips !== null)
    checks.push(row.round_trips <= row.goal.round_trips);
  return checks.length === 0 ? null : checks.every(Boolean);
}

/** Each row's median over the rounds: its figures, its against-row's, and its ratios. */
export function mergeRounds(results) {
  const key = (c) => `${c.request}\u0000${c.topology}\u0000${c.connections}`;
  const keys = [...new Set(results.flatMap((r) => r.comparisons.map(key)))];
  return keys.map((k) => {
    const rows = results.flatMap((r) => r.comparisons.filter((c) => key(c) === k));
    const first = rows[0];
    const of = (pick) => median(rows.map(pick));
    const row = {
      request: first.request,
      topology: first.topology,
      connections: first.connections,
      rounds: rows.length,
      per_second: of((c) => c.per_second),
      cpu_ms: of((c) => c.cpu_ms),
      p99_ms: of((c) => c.p99_ms),
      ...(first.round_trips !== undefined ? { round_trips: of((c) => c.round_trips) } : {}),
      against: first.against
        ? {
            what: first.against.what,
            cpu_ms: of((c) => c.against?.cpu_ms),
            p99_ms: of((c) => c.against?.p99_ms),
          }
        : null,
      cpu_ratio: of((c) => c.cpu_ratio),
      p99_ratio: of((c) => c.p99_ratio),
      cpu_ratios: rows.map((c) => c.cpu_ratio),
      p99_ratios: rows.map((c) => c.p99_ratio),
      goal: first.goal,
    };
    return { ...row, met: meets(row) };
  });
}

/** The anchor's rows, each a median over the rounds. */
function mergeAnchor(results) {
  const key = (a) => `${a.label}\u0000${a.connections}`;
  const keys = [...new Set(results.flatMap((r) => r.anchor.map(key)))];
  return keys.map((k) => {
    const rows = results.flatMap((r) => r.anchor.filter((a) => key(a) === k));
    const of = (pick) => median(rows.map(pick));
    return {
      label: rows[0].label,
      connections: rows[0].connections,
      rps: of((a) => a.rps),
      cpu_ms_per_request: of((a) => a.cpu_ms_per_request),
      p50: of((a) => a.p50),
      p99: of((a) => a.p99),
    };
  });
}

const loadAverage = () => os.loadavg().map((v) => Math.round(v * 100) / 100);

async function main() {
  const results = [];
  for (let round = 1; round <= rounds; round += 1) results.push(await oneRound(round));
  const report = {
    generated_at: new Date().toISOString(),
    command: "npm run bench:compare",
    rounds,
    measured_seconds: seconds,
    calls_measured_seconds: results[0].calls_measured_seconds,
    messages_settings: results[0].messages_settings,
    goals,
    anchor: mergeAnchor(results),
    comparisons: mergeRounds(results),
    each_round: results,
    machine: {
      cpu: os.cpus()[0]?.model.trim() ?? "unknown",
      cores: os.cpus().length,
      load_average_at_end: loadAverage(),
    },
  };
  await writeFile(
    new URL("./results/compare.json", import.meta.url),
    `${JSON.stringify(report, null, 2)}\n`,
  );
  await writeFile(new URL("./results/compare.md", import.meta.url), markdown(report));
  console.log(markdown(report));
}

function markdown(r) {
  const cell = (value) => value ?? "—";
  const goal = (c) => {
    const parts = [
      c.goal.cpu !== undefined && `cpu ≤ ${c.goal.cpu}`,
      c.goal.p99 !== undefined && `p99 ≤ ${c.goal.p99}`,
      c.goal.round_trips !== undefined && `round trips ≤ ${c.goal.round_trips}`,
    ].filter(Boolean);
    if (parts.length === 0) return "";
    return `${parts.join(", ")}: ${c.met === null ? "—" : c.met ? "met" : "**not met**"}`;
  };
  const spread = (values) =>
    r.rounds > 1 && values.some((v) => v !== null) ? ` (${values.map(cell).join(", ")})` : "";
  const rows = r.comparisons.map(
    (c) =>
      `| ${c.request} | ${c.topology} | ${c.connections} | ${c.per_second} | ${c.cpu_ms} | ${c.p99_ms} | ${cell(c.round_trips)} | ${cell(c.against?.what)} | ${cell(c.against?.cpu_ms)} | ${cell(c.against?.p99_ms)} | **${cell(c.cpu_ratio)}**${spread(c.cpu_ratios)} | ${cell(c.p99_ratio)}${c.p99_ratio === null ? "" : spread(c.p99_ratios)} | ${goal(c)} |`,
  );
  const anchorRows = r.anchor.map(
    (a) =>
      `| ${a.label} | ${a.connections} | ${a.rps} | ${a.cpu_ms_per_request} | ${a.p50} | ${a.p99} |`,
  );
  const loads = r.each_round.map((x) => x.load_average_at_end.join(" / ")).join("; ");
  return `# Cost per request: the anchor, the floor, calls and messages

Generated ${r.generated_at} by \`${r.command}\`: ${r.rounds} round${r.rounds > 1 ? "s" : ""} one after the other on this machine (${r.machine.cores} cores, ${r.machine.cpu}; load average at the end of each round ${loads}), each running everything: the anchor and the floor ${r.measured_seconds} s measured per row${r.calls_measured_seconds ? `, the calls ${r.calls_measured_seconds} s` : ""}${r.messages_settings ? `, the messages ${r.messages_settings.requests} per carrier` : ""}. cpu-ms: the machine's CPU time in the measured window (every process: server, PostgreSQL, Redis) less the load generator's own, per request; for a call and a message, over its whole life (\`bench/results/calls.md\`, \`bench/results/messages.md\` hold the last round's). Each ratio divides the row by the one it is compared with from the same round: the floor by the anchor's row for the same request and connections, a call and a message by the floor POST in one process (where they run) at the same connections. Every figure is the median over the rounds${r.rounds > 1 ? "; each ratio is followed by its value in each round" : ""}, and a goal is met when the median ratio meets it. "mesh" is the mesh as deployed (the telemetry preload on, no exporter); "mesh (telemetry off)" is the same with \`OTEL_SDK_DISABLED=true\`. Round trips: PostgreSQL statements per call placed, over its whole life.

| request | topology | connections | per second | cpu-ms | p99 ms | round trips | compared with | its cpu-ms | its p99 ms | cpu ratio | p99 ratio | goal |
|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|
${rows.join("\n")}

The anchor's own rows (medians over the rounds):

| anchor | connections | per second | cpu-ms per request | p50 ms | p99 ms |
|---|---:|---:|---:|---:|---:|
${anchorRows.join("\n")}
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
