/**
 * `npm run bench:anchors`: the project's own monolith anchor (bench/monolith-anchor) and another
 * (ANCHOR_DIR, default ../shared/bench/monolith-anchor) in one run, alternating, three rounds;
 * each row's median cpu-ms per request side by side, and whether they agree within 10 %.
 * Writes bench/results/anchor-agreement.{json,md}.
 */
import { spawnSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import os from "node:os";
import { fileURLToPath } from "node:url";
import { anchorCopy, ownAnchorDir } from "./anchor.mjs";

const other =
  process.env.ANCHOR_DIR ??
  fileURLToPath(new URL("../../shared/bench/monolith-anchor/", import.meta.url));
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);

function run(dir) {
  const result = spawnSync(
    process.execPath,
    ["monolith-anchor.mjs", "bench", "-c", String(connections), "-d", String(seconds)],
    { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] },
  );
  if (result.status !== 0) throw new Error(`the anchor in ${dir} exited ${result.status}`);
  return JSON.parse(result.stdout.trim().split("\n").at(-1));
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const anchors = { own: ownAnchorDir, other: anchorCopy(other) };
const runs = { own: [], other: [] };
for (let round = 0; round < rounds; round += 1) {
  for (const name of round % 2 === 0 ? ["own", "other"] : ["other", "own"]) {
    runs[name].push(run(anchors[name]));
  }
}
const rows = runs.own[0].map(({ label }) => {
  const cpu = (name) =>
    median(
      runs[name].map((rowsOfRun) => rowsOfRun.find((r) => r.label === label).cpu_ms_per_request),
    );
  const own = cpu("own");
  const theirs = cpu("other");
  const difference = Math.round(((own - theirs) / theirs) * 1000) / 10;
  return {
    label,
    own_cpu_ms: own,
    other_cpu_ms: theirs,
    difference_percent: difference,
    agree: Math.abs(difference) <= 10,
  };
});
const report = {
  generated_at: new Date().toISOString(),
  command: "npm run bench:anchors",
  machine: { cores: os.cpus().length, cpu: os.cpus()[0]?.model ?? "unknown" },
  connections,
  seconds,
  rounds,
  other,
  rows,
};
const table = [
  "| row | bench/monolith-anchor cpu-ms | other anchor cpu-ms | difference | within 10 % |",
  "|---|---:|---:|---:|---|",
  ...rows.map(
    (r) =>
      `| ${r.label} | ${r.own_cpu_ms} | ${r.other_cpu_ms} | ${r.difference_percent} % | ${r.agree ? "yes" : "no"} |`,
  ),
].join("\n");
await writeFile(
  new URL("./results/anchor-agreement.json", import.meta.url),
  `${JSON.stringify(report, null, 2)}\n`,
);
await writeFile(
  new URL("./results/anchor-agreement.md", import.meta.url),
  `# The project's anchor against another, in one run\n\nGenerated ${report.generated_at} by \`${report.command}\` (${report.machine.cores} cores, ${report.machine.cpu}): ${connections} connections, ${seconds} s measured per row, ${rounds} rounds alternating; each cell the median of the rounds. The other anchor: \`${other}\`.\n\n${table}\n`,
);
console.log(table);
