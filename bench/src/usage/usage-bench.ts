import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { createLogger } from "@switchboard/kit";
import { renderMarkdown, type IngestResult, type UsageReport } from "./bench-stats.js";
import { ingestThroughput, signingRate } from "./ingest-throughput.js";
import { spareCoreSigningThreads } from "@switchboard/usage/record-signer";
import { recordPathLatency } from "./record-latency.js";

/**
 * `npm run bench:usage`: records ingested and signed per second (AppendRequestRecords fed
 * directly), and the latency the record path adds to a request (the same request with it off
 * and on: the record committed to the gateway's outbox before the reply, relayed after).
 */
const { values: args } = parseArgs({
  options: {
    records: { type: "string", default: "60000" },
    iterations: { type: "string", default: "2000" },
    warmup: { type: "string", default: "200" },
    out: { type: "string", default: "bench/results" },
    redis: { type: "string", default: process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379" },
  },
});

async function redisVersion(url: string): Promise<string> {
  const redis = new Redis(url);
  try {
    const info = await redis.info("server");
    return /redis_version:(\S+)/.exec(info)?.[1] ?? "unknown";
  } finally {
    redis.disconnect();
  }
}

async function main() {
  const logger = createLogger("bench", { level: "error" });
  const loadAtStart = os.loadavg()[0]!.toFixed(2);
  const records = Number(args.records);
  const threads = spareCoreSigningThreads();
  const signing = {
    inline: await signingRate(20_000, 0),
    threaded: await signingRate(20_000, threads),
    threads,
  };
  console.log(
    `signing alone: ${Math.round(signing.inline)} records/s in line, ${Math.round(signing.threaded)} records/s on ${threads} thread(s)`,
  );
  const ingest: IngestResult[] = [];
  for (const [perJob, count] of [
    [1, Math.round(records / 3)],
    [5, records],
    [20, records],
  ] as const) {
    const result = await ingestThroughput({ redisUrl: args.redis, logger, records: count, perJob });
    ingest.push(result);
    console.log(
      `ingest, ${perJob} record(s) per job: ${count} records in ${result.seconds.toFixed(2)} s = ${Math.round(result.records_per_second)} records/s`,
    );
  }
  const { latency, load, floor } = await recordPathLatency({
    redisUrl: args.redis,
    logger,
    iterations: Number(args.iterations),
    warmup: Number(args.warmup),
    loadClients: 32,
    loadSeconds: 5,
  });
  const best = Math.max(...ingest.map((i) => i.records_per_second));
  // Judged at the largest hand-off not above one commit of the gateway under load (a hand-off
  // carries at least the records of one commit).
  const atLoad =
    [...ingest].reverse().find((i) => i.records_per_job <= load.records_per_commit) ?? ingest[0]!;
  const handOff = latency[0]!.added.p50;
  const worstAdded = Math.max(...latency.slice(1).map((l) => l.added.p50));
  const report: UsageReport = {
    generated_at: new Date().toISOString(),
    command: "npm run bench:usage",
    goals: [
      {
        name: "records ingested and signed per second, sustained",
        target: "≥ 5,000/s",
        measured: `${Math.round(atLoad.records_per_second).toLocaleString("en-US")}/s at ${atLoad.records_per_job} records per hand-off (best ${Math.round(best).toLocaleString("en-US")}/s; ${Math.round(ingest[0]!.records_per_second).toLocaleString("en-US")}/s at 1 per hand-off)`,
        met: atLoad.records_per_second >= 5_000,
      },
      {
        name: "latency the record path adds, p50: the reply's commit of its record",
        target: "< 1 ms",
        measured: `${handOff.toFixed(3)} ms`,
        met: handOff < 1,
      },
      {
        name: "the same, the usage service consuming on the same cores (worst route)",
        target: "< 1 ms",
        measured: `${worstAdded.toFixed(3)} ms`,
        met: worstAdded < 1,
      },
    ],
    signing_only_per_second: signing,
    ingest,
    latency,
    load,
    floor,
    machine: {
      cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? "unknown"}`,
      "load average at start (1 min)": loadAtStart,
      "load average at end (1 min)": os.loadavg()[0]!.toFixed(2),
      memory: `${Math.round(os.totalmem() / 2 ** 30)} GiB`,
      node: process.version,
      redis: await redisVersion(args.redis),
    },
  };
  mkdirSync(args.out, { recursive: true });
  writeFileSync(path.join(args.out, "usage.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(path.join(args.out, "usage.md"), renderMarkdown(report));
  for (const goal of report.goals)
    console.log(
      `goal ${goal.name} (${goal.target}): ${goal.measured} — ${goal.met ? "met" : "NOT met"}`,
    );
}

await main();
