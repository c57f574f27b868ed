import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { Worker } from "node:worker_threads";
import {
  createLogger,
  createPool,
  eventQueueName,
  platformConsumerGroups,
  summarizeLatency,
  usageRecordQueue,
  type EventBus,
  type Logger,
  type Pool,
} from "@switchboard/kit";
import { createRealTestDatabase } from "@switchboard/kit/testing";
import { seedInventory } from "@switchboard/inventory";
import { machineBusyMs } from "../cpu-time.js";
import { cpuShares, type CpuShare } from "./cpu-profile.js";
import { type LoadResult } from "./load.js";
import type { LoadWorkerInput } from "./load-worker.js";
import { renderReport, type CallsBenchReport } from "./report.js";

/**
 * `npm run bench:calls`: POST /v1/api/calls/outbound through the gateway (authentication, the
 * Redis token bucket and the Idempotency-Key store on, a new key per request) with the whole
 * platform in process (startPlatform) on a fresh real PostgreSQL database and real Redis. Every
 * call is real: signed, stored, dialled on the sandbox network, rung, answered and completed
 * after SANDBOX_CALL_SECONDS while the load runs, its events relayed to BullMQ. The warm-up is
 * a load of its own whose calls end before the measured window opens; cpu-ms per call counts the
 * machine from the window's start until every call placed in it has ended (cpuPerCall).
 */
const { values: args } = parseArgs({
  options: {
    concurrency: { type: "string", default: process.env.BENCH_CONCURRENCY ?? "16" },
    seconds: { type: "string", default: process.env.BENCH_SECONDS ?? "20" },
    warmup: { type: "string", default: process.env.BENCH_WARMUP_SECONDS ?? "5" },
    seats: { type: "string", default: "8" },
    out: { type: "string", default: "bench/results" },
    /** Writes a CPU profile of the measured window (node:inspector) to this file. */
    profile: { type: "string" },
  },
});
const concurrency = Number(args.concurrency);
const seconds = Number(args.seconds);
const warmupSeconds = Number(args.warmup);
const seatCount = Number(args.seats);
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const sandboxCallSeconds = process.env.SANDBOX_CALL_SECONDS ?? "2";

/** The platform package depends on this one: it is loaded at run time to keep the build graph acyclic. */
interface PlatformModule {
  startPlatform(options: {
    databaseUrl: string;
    redisUrl?: string;
    busPrefix?: string;
    logger: Logger;
    gatewayEnv: NodeJS.ProcessEnv;
    beforeGateway?: (pools: Record<string, Pool>) => Promise<void>;
  }): Promise<{ gateway: { url: string }; bus: EventBus; stop(): Promise<void> }>;
}
const platformPackage = "@switchboard/platform";

async function main() {
  Object.assign(process.env, {
    SANDBOX_CALL_SECONDS: sandboxCallSeconds,
    LOG_LEVEL: process.env.LOG_LEVEL ?? "warn",
  });
  const { startPlatform } = (await import(platformPackage)) as PlatformModule;
  const database = await createRealTestDatabase("bench_calls");
  const logger = createLogger("bench", { level: "warn" });
  const secret = `sbcs_${randomBytes(24).toString("base64url")}`;
  const platform = await startPlatform({
    databaseUrl: database.url,
    redisUrl,
    busPrefix: `bench-${randomBytes(4).toString("hex")}`,
    logger,
    gatewayEnv: {
      ...process.env,
      NODE_ENV: "development",
      PORT: "0",
      HOST: "127.0.0.1",
      PUBLIC_URL: "http://switchboard.bench",
      BOOTSTRAP_ACCOUNT: "acct_bench",
      BOOTSTRAP_CLIENT_ID: "cli_bench",
      BOOTSTRAP_CLIENT_SECRET: secret,
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: `sbbench:${randomBytes(4).toString("hex")}:`,
      RATE_LIMITS: "*=1000000/1000000",
    },
    beforeGateway: async (pools) => {
      await seedInventory(pools.inventory!, { count: 2_000, seed: 9 });
    },
  });
  const base = platform.gateway.url;
  const db = createPool(database.url, { max: 2, name: "bench-observer" });
  try {
    const token = await accessToken(base, secret);
    const auth = { Authorization: `Bearer ${token}`, "Content-Type": "application/json" };
    const post = async (p: string, body: unknown) => {
      const response = await fetch(`${base}${p}`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify(body),
      });
      if (response.status >= 300)
        throw new Error(`${p}: ${response.status} ${await response.text()}`);
      return (await response.json()) as Record<string, unknown>;
    };
    await post("/v1/api/agents", { name: "bench" });
    const search = await fetch(`${base}/v1/api/numbers/search?country=US&limit=${seatCount}`, {
      headers: auth,
    });
    const numbers = ((await search.json()) as { data: { number: string }[] }).data.map(
      (n) => n.number,
    );
    const callers: string[] = [];
    for (const [i, number] of numbers.entries()) {
      const seat = await post("/v1/api/seats", {
        name: `bench ${i}`,
        max_concurrent_calls: 10_000,
      });
      const hold = await post("/v1/api/numbers/hold", { number });
      await post(`/v1/api/numbers/holds/${String(hold.id)}/assign`, { seat_id: seat.id });
      callers.push(number);
    }

    const load = (label: string, measureMs: number) =>
      runLoad({
        label,
        url: `${base}/v1/api/calls/outbound`,
        token,
        concurrency,
        warmupMs: 0,
        measureMs,
        callers,
        agent: "bench",
        to: "+15550100000",
      });
    // The warm-up's calls live and end before the measured window opens, so that the window's
    // CPU time is the measured calls' own.
    console.log(`bench:calls — ${concurrency} connections, ${warmupSeconds} s warm-up…`);
    await load("warm", warmupSeconds * 1000);
    if (!(await waitForEveryCallToEnd(db, platform.bus, 120_000)))
      throw new Error("the warm-up's calls did not end within 120 s");

    const profiler = args.profile ? await startProfiler() : undefined;
    console.log(`bench:calls — ${seconds} s measured…`);
    const start = cpuNow();
    const run = await load("run", seconds * 1000);
    const placing = cpuNow();
    let cpu: CpuShare[] | undefined;
    if (profiler && args.profile) {
      const profile = await profiler();
      writeFileSync(args.profile, JSON.stringify(profile));
      cpu = cpuShares(profile as Parameters<typeof cpuShares>[0]);
    }
    const placed = run.latencies.get(201) ?? [];
    const all = [...run.latencies.values()].flat();
    const backlogAtEnd = await backlog(db);
    const settled = await waitForEveryCallToEnd(db, platform.bus, 120_000);
    const end = cpuNow();
    const report: CallsBenchReport = {
      generated_at: new Date().toISOString(),
      command: "npm run bench:calls",
      concurrency,
      warmup_seconds: warmupSeconds,
      measured_seconds: Math.round(run.seconds * 1000) / 1000,
      sandbox_call_seconds: Number(sandboxCallSeconds),
      seats: callers.length,
      statuses: Object.fromEntries(
        [...run.latencies.entries()].map(([status, list]) => [String(status), list.length]),
      ),
      placed_per_second: Math.round((placed.length / run.seconds) * 10) / 10,
      latency_ms: summarizeLatency(all),
      latency_201_ms: summarizeLatency(placed),
      after_window: {
        ...backlogAtEnd,
        seconds_until_every_call_ended: settled
          ? Math.round((end.at - placing.at) / 100) / 10
          : null,
      },
      cpu: cpuPerCall(placed.length, { start, placing, end }, run.generatorCpuMs),
      goal: { placed_per_second: 1000, p99_ms: 50 },
      ...(cpu ? { cpu_during_window: cpu } : {}),
      machine: await machine(db),
    };
    mkdirSync(args.out, { recursive: true });
    writeFileSync(path.join(args.out, "calls.json"), `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(path.join(args.out, "calls.md"), renderReport(report));
    console.log(renderReport(report));
  } finally {
    await db.end();
    await platform.stop();
    await database.drop();
  }
}

/** Runs the closed loop on a worker thread: its latencies by status and the thread's CPU time. */
function runLoad(input: LoadWorkerInput): Promise<LoadResult & { generatorCpuMs: number }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("./load-worker.js", import.meta.url), { workerData: input });
    worker.once(
      "message",
      (message: { seconds: number; latencies: [number, number[]][]; generatorCpuMs: number }) =>
        resolve({ ...message, latencies: new Map(message.latencies) }),
    );
    worker.once("error", reject);
    worker.once("exit", (code) => {
      if (code !== 0) reject(new Error(`the load worker exited with ${code}`));
    });
  });
}

/** Starts the V8 CPU profiler; the returned function stops it. */
async function startProfiler(): Promise<() => Promise<unknown>> {
  const inspector = await import("node:inspector");
  const session = new inspector.Session();
  session.connect();
  const post = (method: string) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, (error, result) => (error ? reject(error) : resolve(result))),
    );
  await post("Profiler.enable");
  await post("Profiler.start");
  return async () => {
    const { profile } = (await post("Profiler.stop")) as { profile: unknown };
    session.disconnect();
    return profile;
  };
}

async function accessToken(base: string, secret: string): Promise<string> {
  const response = await fetch(`${base}/oauth/token`, {
    method: "POST",
    headers: {
      Authorization: `Basic ${Buffer.from(`cli_bench:${secret}`).toString("base64")}`,
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: "grant_type=client_credentials",
  });
  return ((await response.json()) as { access_token: string }).access_token;
}

async function backlog(db: Pool) {
  const { rows } = await db.query<{
    live: number;
    ended: number;
    timers_due: number;
    outbox_unpublished: number;
  }>(
    `SELECT
       (SELECT count(*)::int FROM call_control.calls WHERE ended_at IS NULL) AS live,
       (SELECT count(*)::int FROM call_control.calls WHERE ended_at IS NOT NULL) AS ended,
       (SELECT count(*)::int FROM call_control.scheduled_actions WHERE due_at <= now()) AS timers_due,
       (SELECT count(*)::int FROM call_control.outbox WHERE published_at IS NULL) AS outbox_unpublished`,
  );
  return rows[0]!;
}

/**
 * Polls until every call has ended, its events are relayed and the queues their consumers read
 * (usage, webhooks, and the gateway's request records) have nothing waiting or running.
 */
async function waitForEveryCallToEnd(db: Pool, bus: EventBus, timeoutMs: number) {
  const queues = [...platformConsumerGroups.map((g) => eventQueueName(g.name)), usageRecordQueue];
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { live, outbox_unpublished } = await backlog(db);
    const counts = await Promise.all(queues.map((queue) => bus.jobCounts(queue)));
    const queued = counts.reduce((sum, c) => sum + c.waiting + c.active, 0);
    if (live + outbox_unpublished + queued === 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  return false;
}

interface CpuMark {
  at: number;
  machine: number;
  process: number;
}

/** Where the CPU time stands now: the machine's and this process's (the whole platform). */
function cpuNow(): CpuMark {
  const usage = process.cpuUsage();
  return {
    at: performance.now(),
    machine: machineBusyMs(),
    process: (usage.user + usage.system) / 1000,
  };
}

/**
 * cpu-ms per call placed in the window, over the whole life of the calls: the machine's CPU time
 * (the platform, PostgreSQL, Redis) from the window's start until every call had ended, less the
 * load generator's thread — as the messages benchmark measures a message's whole life.
 */
function cpuPerCall(
  calls: number,
  marks: { start: CpuMark; placing: CpuMark; end: CpuMark },
  generatorCpuMs: number,
): CallsBenchReport["cpu"] {
  const { start, placing, end } = marks;
  const perCall = (ms: number) => Math.round((ms / Math.max(1, calls)) * 1000) / 1000;
  const served = end.machine - start.machine - generatorCpuMs;
  const platform = end.process - start.process - generatorCpuMs;
  return {
    window_ms: Math.round(end.at - start.at),
    ms_per_call: perCall(served),
    placing_ms_per_call: perCall(placing.machine - start.machine - generatorCpuMs),
    after_window_ms_per_call: perCall(end.machine - placing.machine),
    platform_process_ms_per_call: perCall(platform),
    rest_ms_per_call: perCall(served - platform),
    load_generator_ms: Math.round(generatorCpuMs),
  };
}

async function machine(db: Pool) {
  const version = await db.query<{ version: string }>("SELECT version()");
  return {
    cpu: os.cpus()[0]?.model.trim() ?? "unknown",
    cores: os.cpus().length,
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    postgres: version.rows[0]?.version.split(" on ")[0] ?? "unknown",
    load_average_at_end: os.loadavg().map((v) => Math.round(v * 100) / 100),
  };
}

await main();
process.exit(0);
